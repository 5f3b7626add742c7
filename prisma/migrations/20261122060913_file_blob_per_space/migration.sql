-- DropIndex
DROP INDEX "FileBlob_spaceId_idx";

-- AlterTable
ALTER TABLE "FileBlob" DROP CONSTRAINT "FileBlob_pkey",
ADD CONSTRAINT "FileBlob_pkey" PRIMARY KEY ("spaceId", "id");

