-- Every space has an active revision: a space without content gets its initial, empty one
-- (new spaces are created with it).
INSERT INTO "Revision" ("id", "spaceId", "parents", "type", "content", "createdAt")
SELECT 'rev_' || substr(md5(random()::text || s."id"), 1, 20), s."id", '{}', 'initial',
       '{"pages": {}, "files": {}, "reusableContents": {}, "variables": {}}'::jsonb, s."createdAt"
  FROM "Space" s
 WHERE s."revisionId" IS NULL;

UPDATE "Space" s
   SET "revisionId" = r."id"
  FROM "Revision" r
 WHERE s."revisionId" IS NULL AND r."spaceId" = s."id" AND r."type" = 'initial';
