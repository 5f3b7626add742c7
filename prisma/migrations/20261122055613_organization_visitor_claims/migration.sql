-- AlterTable
ALTER TABLE "Organization" ADD COLUMN     "visitorClaimsSecret" TEXT;

