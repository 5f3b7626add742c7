-- AlterTable
ALTER TABLE "Site" DROP COLUMN "shareKey",
ADD COLUMN     "visitorAuthSecret" TEXT;

-- CreateTable
CREATE TABLE "SiteShareLink" (
    "id" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "name" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMP(3),

    CONSTRAINT "SiteShareLink_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "SiteShareLink_key_key" ON "SiteShareLink"("key");

-- CreateIndex
CREATE INDEX "SiteShareLink_siteId_idx" ON "SiteShareLink"("siteId");

-- AddForeignKey
ALTER TABLE "SiteShareLink" ADD CONSTRAINT "SiteShareLink_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;

