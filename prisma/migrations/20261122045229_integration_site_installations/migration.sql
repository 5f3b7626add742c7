-- CreateTable
CREATE TABLE "IntegrationSiteInstallation" (
    "installationId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "configuration" JSONB NOT NULL DEFAULT '{}',
    "externalIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IntegrationSiteInstallation_pkey" PRIMARY KEY ("installationId","siteId")
);

-- CreateIndex
CREATE INDEX "IntegrationSiteInstallation_siteId_idx" ON "IntegrationSiteInstallation"("siteId");

-- AddForeignKey
ALTER TABLE "IntegrationSiteInstallation" ADD CONSTRAINT "IntegrationSiteInstallation_installationId_fkey" FOREIGN KEY ("installationId") REFERENCES "IntegrationInstallation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "IntegrationSiteInstallation" ADD CONSTRAINT "IntegrationSiteInstallation_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;

