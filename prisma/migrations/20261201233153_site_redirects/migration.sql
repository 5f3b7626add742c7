-- CreateTable
CREATE TABLE "SiteRedirect" (
    "id" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "destination" JSONB NOT NULL,
    "draft" BOOLEAN NOT NULL DEFAULT false,
    "captureWildcard" BOOLEAN NOT NULL DEFAULT false,
    "permanent" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SiteRedirect_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SiteRedirect_siteId_createdAt_id_idx" ON "SiteRedirect"("siteId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "SiteRedirect_siteId_source_key" ON "SiteRedirect"("siteId", "source");

-- AddForeignKey
ALTER TABLE "SiteRedirect" ADD CONSTRAINT "SiteRedirect_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;

