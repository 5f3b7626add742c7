-- DropIndex
DROP INDEX "ChangeRequest_spaceId_status_idx";

-- DropIndex
DROP INDEX "Comment_spaceId_changeRequestId_postedAt_idx";

-- DropIndex
DROP INDEX "Comment_parentId_idx";

-- DropIndex
DROP INDEX "IntegrationEvent_integrationId_createdAt_idx";

-- DropIndex
DROP INDEX "OpenApiSpecVersion_specId_createdAt_idx";

-- CreateIndex
CREATE INDEX "Member_organizationId_joinedAt_userId_idx" ON "Member"("organizationId", "joinedAt", "userId");

-- CreateIndex
CREATE INDEX "Collection_organizationId_position_id_idx" ON "Collection"("organizationId", "position", "id");

-- CreateIndex
CREATE INDEX "Collection_organizationId_createdAt_id_idx" ON "Collection"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Space_organizationId_createdAt_id_idx" ON "Space"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Space_parentId_position_id_idx" ON "Space"("parentId", "position", "id");

-- CreateIndex
CREATE INDEX "ChangeRequest_spaceId_status_number_idx" ON "ChangeRequest"("spaceId", "status", "number");

-- CreateIndex
CREATE INDEX "Comment_spaceId_postedAt_id_idx" ON "Comment"("spaceId", "postedAt", "id");

-- CreateIndex
CREATE INDEX "Comment_changeRequestId_postedAt_id_idx" ON "Comment"("changeRequestId", "postedAt", "id");

-- CreateIndex
CREATE INDEX "Comment_parentId_postedAt_id_idx" ON "Comment"("parentId", "postedAt", "id");

-- CreateIndex
CREATE INDEX "IntegrationEvent_integrationId_createdAt_id_idx" ON "IntegrationEvent"("integrationId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "OpenApiSpecVersion_specId_createdAt_id_idx" ON "OpenApiSpecVersion"("specId", "createdAt", "id");

