-- AlterTable
ALTER TABLE "Space" ADD COLUMN     "changeRequestsCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "draftChangeRequestsCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "openChangeRequestsCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "openCommentsCount" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "ChangeRequest" ADD COLUMN     "openCommentsCount" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Comment" ADD COLUMN     "repliesCount" INTEGER NOT NULL DEFAULT 0;


-- The counts a space, a change request and a comment answer with, kept as columns by the database
-- itself: every write to "ChangeRequest" and "Comment" (Prisma's, a cascade, a raw statement)
-- adjusts them in its own transaction, by increments in SQL (the parent row's lock orders
-- concurrent writers, so no count is lost). Reads of a space then need no COUNT statement.
--   Space."openCommentsCount":    its open top-level comments on the space itself (not on its change requests)
--   Space."changeRequestsCount", "openChangeRequestsCount", "draftChangeRequestsCount": its change requests, all / open / draft
--   ChangeRequest."openCommentsCount": its open top-level comments
--   Comment."repliesCount":       its replies
-- A parent removed by the same statement (a cascade) is simply not found: nothing to adjust.

CREATE FUNCTION "change_request_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "Space" SET
      "changeRequestsCount" = "changeRequestsCount" - 1,
      "openChangeRequestsCount" = "openChangeRequestsCount" - (OLD."status" = 'open')::int,
      "draftChangeRequestsCount" = "draftChangeRequestsCount" - (OLD."status" = 'draft')::int
    WHERE "id" = OLD."spaceId";
  END IF;
  IF TG_OP <> 'DELETE' THEN
    UPDATE "Space" SET
      "changeRequestsCount" = "changeRequestsCount" + 1,
      "openChangeRequestsCount" = "openChangeRequestsCount" + (NEW."status" = 'open')::int,
      "draftChangeRequestsCount" = "draftChangeRequestsCount" + (NEW."status" = 'draft')::int
    WHERE "id" = NEW."spaceId";
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "ChangeRequest_counts" AFTER INSERT OR DELETE ON "ChangeRequest"
  FOR EACH ROW EXECUTE FUNCTION "change_request_counts"();
CREATE TRIGGER "ChangeRequest_counts_update" AFTER UPDATE OF "spaceId", "status" ON "ChangeRequest"
  FOR EACH ROW WHEN (OLD."spaceId" IS DISTINCT FROM NEW."spaceId" OR OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "change_request_counts"();

CREATE FUNCTION "comment_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    IF OLD."parentId" IS NOT NULL THEN
      UPDATE "Comment" SET "repliesCount" = "repliesCount" - 1 WHERE "id" = OLD."parentId";
    ELSIF OLD."status" = 'open' AND OLD."changeRequestId" IS NULL THEN
      UPDATE "Space" SET "openCommentsCount" = "openCommentsCount" - 1 WHERE "id" = OLD."spaceId";
    ELSIF OLD."status" = 'open' THEN
      UPDATE "ChangeRequest" SET "openCommentsCount" = "openCommentsCount" - 1 WHERE "id" = OLD."changeRequestId";
    END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    IF NEW."parentId" IS NOT NULL THEN
      UPDATE "Comment" SET "repliesCount" = "repliesCount" + 1 WHERE "id" = NEW."parentId";
    ELSIF NEW."status" = 'open' AND NEW."changeRequestId" IS NULL THEN
      UPDATE "Space" SET "openCommentsCount" = "openCommentsCount" + 1 WHERE "id" = NEW."spaceId";
    ELSIF NEW."status" = 'open' THEN
      UPDATE "ChangeRequest" SET "openCommentsCount" = "openCommentsCount" + 1 WHERE "id" = NEW."changeRequestId";
    END IF;
  END IF;
  RETURN NULL;
END $$;

-- The counts' own updates (of "repliesCount") touch none of the watched columns: no recursion.
CREATE TRIGGER "Comment_counts" AFTER INSERT OR DELETE ON "Comment"
  FOR EACH ROW EXECUTE FUNCTION "comment_counts"();
CREATE TRIGGER "Comment_counts_update" AFTER UPDATE OF "spaceId", "changeRequestId", "parentId", "status" ON "Comment"
  FOR EACH ROW WHEN (
    OLD."spaceId" IS DISTINCT FROM NEW."spaceId" OR OLD."changeRequestId" IS DISTINCT FROM NEW."changeRequestId"
    OR OLD."parentId" IS DISTINCT FROM NEW."parentId" OR OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "comment_counts"();

-- Backfill from the rows already there.
UPDATE "Space" s SET
  "changeRequestsCount" = c.total,
  "openChangeRequestsCount" = c.open,
  "draftChangeRequestsCount" = c.draft
FROM (
  SELECT "spaceId", count(*)::int AS total, (count(*) FILTER (WHERE "status" = 'open'))::int AS open, (count(*) FILTER (WHERE "status" = 'draft'))::int AS draft
  FROM "ChangeRequest" GROUP BY "spaceId"
) c
WHERE c."spaceId" = s."id";

UPDATE "Space" s SET "openCommentsCount" = c.n
FROM (
  SELECT "spaceId", count(*)::int AS n FROM "Comment"
  WHERE "changeRequestId" IS NULL AND "parentId" IS NULL AND "status" = 'open' GROUP BY "spaceId"
) c
WHERE c."spaceId" = s."id";

UPDATE "ChangeRequest" r SET "openCommentsCount" = c.n
FROM (
  SELECT "changeRequestId", count(*)::int AS n FROM "Comment"
  WHERE "changeRequestId" IS NOT NULL AND "parentId" IS NULL AND "status" = 'open' GROUP BY "changeRequestId"
) c
WHERE c."changeRequestId" = r."id";

UPDATE "Comment" p SET "repliesCount" = c.n
FROM (SELECT "parentId", count(*)::int AS n FROM "Comment" WHERE "parentId" IS NOT NULL GROUP BY "parentId") c
WHERE c."parentId" = p."id";

-- Only these triggers write the counts: a row starts with zero (its children come after it), and
-- an UPDATE from anything but a trigger (a row copied back whole, say) leaves them as they are.
CREATE FUNCTION "space_counts_kept"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW."openCommentsCount" := 0; NEW."changeRequestsCount" := 0; NEW."openChangeRequestsCount" := 0; NEW."draftChangeRequestsCount" := 0;
  ELSE
    NEW."openCommentsCount" := OLD."openCommentsCount"; NEW."changeRequestsCount" := OLD."changeRequestsCount";
    NEW."openChangeRequestsCount" := OLD."openChangeRequestsCount"; NEW."draftChangeRequestsCount" := OLD."draftChangeRequestsCount";
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER "Space_counts_kept" BEFORE INSERT ON "Space" FOR EACH ROW EXECUTE FUNCTION "space_counts_kept"();
CREATE TRIGGER "Space_counts_kept_update" BEFORE UPDATE OF "openCommentsCount", "changeRequestsCount", "openChangeRequestsCount", "draftChangeRequestsCount" ON "Space"
  FOR EACH ROW WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION "space_counts_kept"();

CREATE FUNCTION "change_request_counts_kept"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."openCommentsCount" := CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD."openCommentsCount" END;
  RETURN NEW;
END $$;
CREATE TRIGGER "ChangeRequest_counts_kept" BEFORE INSERT ON "ChangeRequest" FOR EACH ROW EXECUTE FUNCTION "change_request_counts_kept"();
CREATE TRIGGER "ChangeRequest_counts_kept_update" BEFORE UPDATE OF "openCommentsCount" ON "ChangeRequest"
  FOR EACH ROW WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION "change_request_counts_kept"();

CREATE FUNCTION "comment_counts_kept"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."repliesCount" := CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD."repliesCount" END;
  RETURN NEW;
END $$;
CREATE TRIGGER "Comment_counts_kept" BEFORE INSERT ON "Comment" FOR EACH ROW EXECUTE FUNCTION "comment_counts_kept"();
CREATE TRIGGER "Comment_counts_kept_update" BEFORE UPDATE OF "repliesCount" ON "Comment"
  FOR EACH ROW WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION "comment_counts_kept"();
