import { describe, expect, it } from "vitest";
import { readTags, writeTags } from "../../src/core/cache/request-reads.js";
import { statementChanges, withTriggerWrites, writtenTables, type Cascades } from "../../src/core/db/db.js";

/**
 * How the response cache names what an answer read and what a write changed (core/cache/row-keys.ts,
 * core/cache/request-reads.ts `readTags` / `writeTags`), on statements as Prisma sends them: per row
 * where the statement proves which rows, per table where it does not.
 */
const cascades: Cascades = new Map([
  ["Space", ["Comment", "ChangeRequest"]],
  ["Comment", ["Comment", "CommentReaction"]],
]);
const writeOf = (sql: string, args: unknown[], result?: { columnNames: string[]; rows: unknown[][] }) =>
  writeTags(statementChanges(sql, args, result, cascades));
/** Whether a write drops an answer made from `read`. */
const drops = (write: string[], read: string[]) => write.some((tag) => read.includes(tag));

const SPACE_BY_ID = `SELECT "public"."Space"."id", "public"."Space"."title" FROM "public"."Space" WHERE "public"."Space"."id" IN ($1) OFFSET $2`;
const COMMENTS_OF = `SELECT "public"."Comment"."id" FROM "public"."Comment" WHERE ("public"."Comment"."spaceId" = $1 AND "public"."Comment"."changeRequestId" IS NULL AND "public"."Comment"."parentId" IS NULL) ORDER BY "public"."Comment"."postedAt" DESC LIMIT $2 OFFSET $3`;
const COUNT_OF = `SELECT COUNT(*) AS "_count$_all" FROM (SELECT "public"."Comment"."id" FROM "public"."Comment" WHERE ("public"."Comment"."spaceId" = $1 AND "public"."Comment"."parentId" IS NULL) OFFSET $2) AS "sub"`;
const COMMENT_COLUMNS = [
  "id",
  "spaceId",
  "changeRequestId",
  "parentId",
  "pageId",
  "nodeId",
  "revisionId",
  "markdown",
  "status",
  "postedById",
  "resolvedById",
];
const INSERT_COMMENT = `INSERT INTO "public"."Comment" ("id","spaceId","markdown","status","postedById") VALUES ($1,$2,$3,CAST($4::text AS "public"."CommentStatus"),$5) RETURNING ${COMMENT_COLUMNS.map((c) => `"public"."Comment"."${c}"`).join(", ")}`;
const commentRow = (id: string, spaceId: string, parentId: string | null = null) => ({
  columnNames: COMMENT_COLUMNS,
  rows: [[id, spaceId, null, parentId, null, null, "rev_1", "text", "open", "usr_1", null]],
});

describe("what an answer read", () => {
  it("rows looked up by key: those rows; a filter on a parent's key: that parent's rows (lists and counts alike)", () => {
    expect(readTags(SPACE_BY_ID, ["spc_A", "0"])).toEqual(["Space", "Space.id=*", "Space.id=spc_A"]);
    expect(readTags(COMMENTS_OF, ["spc_A", "50", "0"])).toEqual(["Comment", "Comment.spaceId=*", "Comment.spaceId=spc_A"]);
    expect(readTags(COUNT_OF, ["spc_A", "0"])).toEqual(["Comment", "Comment.spaceId=*", "Comment.spaceId=spc_A"]);
  });

  it("a statement's text is read once: sent again with other parameters, its tags follow those parameters", () => {
    const sql = `SELECT "public"."Comment"."id" FROM "public"."Comment" WHERE ("public"."Comment"."id" = $1 AND "public"."Comment"."spaceId" IN ($2,$3)) OFFSET $4`;
    const keyed = (args: unknown[]) => readTags(sql, args).filter((t) => !t.endsWith("=*"));
    expect(keyed(["c1", "spc_A", "spc_B", "0"])).toEqual(["Comment", "Comment.id=c1"]);
    // The id is not a string this time: the other key conjunct restricts.
    expect(keyed([1, "spc_A", "spc_B", "0"])).toEqual(["Comment", "Comment.spaceId=spc_A", "Comment.spaceId=spc_B"]);
    expect(keyed([1, "spc_A", 2, "0"])).toEqual(["Comment", "Comment.*"]);
    expect(keyed(["c2", "spc_A", "spc_B", "0"])).toEqual(["Comment", "Comment.id=c2"]);
    expect(readTags(sql)).toEqual(["Comment", "Comment.*"]);
  });

  it("anything else: any row of the table", () => {
    const any = (sql: string, args: unknown[]) => readTags(sql, args).filter((t) => t.endsWith(".*"));
    // An OR at the top of the condition.
    expect(
      any(`SELECT "public"."Space"."id" FROM "public"."Space" WHERE ("public"."Space"."id" = $1 OR "public"."Space"."title" = $2)`, [
        "a",
        "b",
      ]),
    ).toEqual(["Space.*"]);
    // A column that is not a key.
    expect(any(`SELECT "public"."Space"."id" FROM "public"."Space" WHERE "public"."Space"."title" = $1`, ["a"])).toEqual(["Space.*"]);
    // Raw SQL (the table not schema-qualified), a value that is not a string, no parameters known.
    expect(any(`SELECT "id" FROM "Space" WHERE "id" = $1`, ["a"])).toEqual(["Space.*"]);
    expect(any(`SELECT "public"."Space"."id" FROM "public"."Space" WHERE "public"."Space"."id" = $1`, [1])).toEqual(["Space.*"]);
    expect(readTags(`SELECT "public"."Space"."id" FROM "public"."Space" WHERE "public"."Space"."id" = $1`)).toContain("Space.*");
    // The table named twice (a self-join), a key inside a subquery only, a NOT.
    expect(
      any(
        `SELECT "public"."Comment"."id" FROM "public"."Comment" LEFT JOIN "public"."Comment" AS "j0" ON ("j0"."id") = ("public"."Comment"."parentId") WHERE "public"."Comment"."id" = $1`,
        ["c"],
      ),
    ).toEqual(["Comment.*"]);
    expect(
      any(
        `SELECT "public"."Space"."id" FROM "public"."Space" WHERE EXISTS(SELECT 1 FROM "public"."Member" AS "t1" WHERE "public"."Space"."id" = $1)`,
        ["a"],
      ),
    ).toEqual(["Space.*", "Member.*"]);
    expect(any(`SELECT "public"."Space"."id" FROM "public"."Space" WHERE (NOT "public"."Space"."id" = $1)`, ["a"])).toEqual(["Space.*"]);
    // A table read in a subquery of another, unfiltered where it is read.
    expect(any(`SELECT COUNT(*) FROM (SELECT "public"."Space"."id" FROM "public"."Space") AS "sub" WHERE "sub"."id" = $1`, ["a"])).toEqual([
      "Space.*",
    ]);
  });
});

describe("what a write changed", () => {
  it("a comment: its row, its space's comments, and its space's row (the count a trigger keeps): not another space's", () => {
    const write = writeOf(INSERT_COMMENT, ["cmt_1", "spc_A", "text", "open", "usr_1"], commentRow("cmt_1", "spc_A"));
    expect(write).toEqual(expect.arrayContaining(["Comment.*", "Comment.id=cmt_1", "Comment.spaceId=spc_A", "Space.id=spc_A"]));
    expect(write).not.toContain("Space");
    expect(write).not.toContain("Comment");
    expect(drops(write, readTags(SPACE_BY_ID, ["spc_A", "0"]))).toBe(true);
    expect(drops(write, readTags(COMMENTS_OF, ["spc_A", "50", "0"]))).toBe(true);
    expect(drops(write, readTags(COUNT_OF, ["spc_A", "0"]))).toBe(true);
    expect(drops(write, readTags(SPACE_BY_ID, ["spc_B", "0"]))).toBe(false);
    expect(drops(write, readTags(COMMENTS_OF, ["spc_B", "50", "0"]))).toBe(false);
    expect(drops(write, readTags(COUNT_OF, ["spc_B", "0"]))).toBe(false);
    // Lists and searches by anything else are dropped by every write of the table.
    expect(
      drops(write, readTags(`SELECT "public"."Comment"."id" FROM "public"."Comment" WHERE "public"."Comment"."markdown" = $1`, ["x"])),
    ).toBe(true);
  });

  it("without RETURNING, the rows its VALUES or its WHERE name; the columns it does not know, for any value", () => {
    // An INSERT without RETURNING: the rows from its parameters.
    expect(
      writeOf(`INSERT INTO "public"."PageSearch" ("spaceId","pageId","revisionId","title") VALUES ($1,$2,$3,$4)`, [
        "spc_A",
        "pg_1",
        "rev_1",
        "T",
      ]),
    ).toEqual(expect.arrayContaining(["PageSearch.*", "PageSearch.spaceId=spc_A", "PageSearch.pageId=pg_1"]));
    // An UPDATE by id: that row, and any reader by another key (its value there is not known).
    const update = writeOf(
      `UPDATE "public"."Space" SET "revisionId" = $1, "updatedAt" = $2 WHERE ("public"."Space"."id" = $3 AND "public"."Space"."revisionId" = $4)`,
      ["rev_2", "now", "spc_A", "rev_1"],
    );
    expect(update).toEqual(expect.arrayContaining(["Space.id=spc_A", "Space.organizationId=*", "Space.revisionId=*"]));
    expect(drops(update, readTags(SPACE_BY_ID, ["spc_B", "0"]))).toBe(false);
    expect(
      drops(update, readTags(`SELECT "public"."Space"."id" FROM "public"."Space" WHERE "public"."Space"."organizationId" = $1`, ["org_1"])),
    ).toBe(true);
  });

  it("a comment moved to another space: the readers by any space, and both spaces' counts (the table)", () => {
    const sql = `UPDATE "public"."Comment" SET "spaceId" = $1 WHERE ("public"."Comment"."id" = $2 AND 1=1) RETURNING ${COMMENT_COLUMNS.map((c) => `"public"."Comment"."${c}"`).join(", ")}`;
    const write = writeOf(sql, ["spc_B", "cmt_1"], commentRow("cmt_1", "spc_B"));
    expect(write).toEqual(expect.arrayContaining(["Comment.spaceId=*", "Space"]));
    expect(drops(write, readTags(COMMENTS_OF, ["spc_A", "50", "0"]))).toBe(true);
  });

  it("a statement of data-modifying parts (WITH … AS (INSERT …) INSERT …): every table it writes, and what its deletes cascade to", () => {
    const events = `WITH "events" AS (INSERT INTO "IntegrationEvent" ("id") SELECT "id" FROM jsonb_to_recordset($1::jsonb) AS r("id" text))
      INSERT INTO "IntegrationEventLog" ("id", "eventId") SELECT "id", "eventId" FROM jsonb_to_recordset($2::jsonb) AS r("id" text, "eventId" text)`;
    expect(writtenTables(events)).toEqual([
      { verb: "INSERT", table: "IntegrationEvent" },
      { verb: "INSERT", table: "IntegrationEventLog" },
    ]);
    expect(writeOf(events, ["[]", "[]"])).toEqual(["IntegrationEvent", "IntegrationEventLog"]);
    const purge = `WITH "gone" AS (DELETE FROM "Space" WHERE "id" = $1 RETURNING "id") SELECT count(*) FROM "gone"`;
    expect(writeOf(purge, ["spc_A"])).toEqual(expect.arrayContaining(["Space", "Comment", "ChangeRequest", "CommentReaction"]));
    // Each part is read as a statement of its own: a new revision and the space's compare-and-set
    // to it name their rows, and another space's answers stay.
    const commit = `WITH "revision" AS (
      INSERT INTO "public"."Revision" ("id", "spaceId", "changeRequestId", "parents", "type", "content", "createdById", "createdAt")
      VALUES ($1, $2, $3, $4::text[], $5, $6::jsonb, $7, $8::timestamp(3)))
    UPDATE "public"."Space" SET "revisionId" = $9, "updatedAt" = $10::timestamp(3) WHERE ("public"."Space"."id" = $11 AND "public"."Space"."revisionId" = $12)`;
    const changed = writeOf(commit, ["rev_2", "spc_A", null, ["rev_1"], "edits", "{}", "usr_1", "t", "rev_2", "t", "spc_A", "rev_1"]);
    expect(changed).toEqual(
      expect.arrayContaining(["Revision.id=rev_2", "Revision.spaceId=spc_A", "Space.id=spc_A", "Space.revisionId=*"]),
    );
    expect(changed).not.toContain("Revision");
    expect(changed).not.toContain("Space");
    expect(drops(changed, readTags(SPACE_BY_ID, ["spc_A", "0"]))).toBe(true);
    expect(drops(changed, readTags(SPACE_BY_ID, ["spc_B", "0"]))).toBe(false);
    // The same write made only when the compare-and-set is (content/revisions.ts commitAtOnce): the
    // revision is an INSERT … SELECT of its values FROM the part that moved the head; its rows are
    // known all the same.
    const atOnce = `WITH "locked" AS (
        SELECT "id" FROM "public"."Space" WHERE "id" = $1 AND "revisionId" = $2 AND "organizationId" = $3 AND "deletedAt" IS NULL FOR NO KEY UPDATE NOWAIT),
      "head" AS (
        UPDATE "public"."Space" SET "revisionId" = $4, "updatedAt" = $5::timestamp(3)
          WHERE "public"."Space"."id" = $6 AND "public"."Space"."revisionId" = $7 AND "public"."Space"."id" IN (SELECT "id" FROM "locked")
          RETURNING "public"."Space"."id"),
      "revision" AS (
        INSERT INTO "public"."Revision" ("id", "spaceId", "changeRequestId", "parents", "type", "content", "createdById", "createdAt")
        SELECT $8, $9, $10, $11::text[], $12, $13::jsonb, $14, $15::timestamp(3) FROM "head")
      SELECT count(*)::int AS "stored" FROM "head"`;
    const once = writeOf(atOnce, [
      "spc_A",
      "rev_1",
      "org_1",
      "rev_2",
      "t",
      "spc_A",
      "rev_1",
      "rev_2",
      "spc_A",
      null,
      ["rev_1"],
      "edits",
      "{}",
      "usr_1",
      "t",
    ]);
    expect(once).toEqual(expect.arrayContaining(["Revision.id=rev_2", "Revision.spaceId=spc_A", "Space.id=spc_A", "Space.revisionId=*"]));
    expect(once).not.toContain("Revision");
    expect(once).not.toContain("Space");
    expect(drops(once, readTags(SPACE_BY_ID, ["spc_A", "0"]))).toBe(true);
    expect(drops(once, readTags(SPACE_BY_ID, ["spc_B", "0"]))).toBe(false);
    // A change request's edit made the same way: its compare-and-set names the change request, the
    // revision its rows; the contributor's upsert is the table (ON CONFLICT is not read).
    const requestAtOnce = `WITH "locked" AS (
        SELECT "id" FROM "public"."Space" WHERE "id" = $1 AND "organizationId" = $2 AND "deletedAt" IS NULL FOR NO KEY UPDATE NOWAIT),
      "head" AS (
        UPDATE "public"."ChangeRequest" SET "revisionId" = $3, "updatedAt" = $4::timestamp(3)
          WHERE "public"."ChangeRequest"."id" = $5 AND "public"."ChangeRequest"."spaceId" = $6
            AND "public"."ChangeRequest"."revisionId" = $7 AND "public"."ChangeRequest"."status"::text IN ($8,$9) AND EXISTS (SELECT 1 FROM "locked")
          RETURNING "public"."ChangeRequest"."id"),
      "revision" AS (
        INSERT INTO "public"."Revision" ("id", "spaceId", "changeRequestId", "parents", "type", "content", "createdById", "createdAt")
        SELECT $10, $11, $12, $13::text[], $14, $15::jsonb, $16, $17::timestamp(3) FROM "head"),
      "contributor" AS (
        INSERT INTO "public"."ChangeRequestContributor" ("changeRequestId", "userId", "lastEditAt")
        SELECT $18, $19, $20::timestamp(3) FROM "head"
        ON CONFLICT ("changeRequestId", "userId") DO UPDATE SET "lastEditAt" = EXCLUDED."lastEditAt")
      SELECT count(*)::int AS "stored" FROM "head"`;
    const request = writeOf(requestAtOnce, [
      "spc_A",
      "org_1",
      "rev_2",
      "t",
      "cr_1",
      "spc_A",
      "rev_1",
      "draft",
      "open",
      "rev_2",
      "spc_A",
      "cr_1",
      ["rev_1"],
      "edits",
      "{}",
      "usr_1",
      "t",
      "cr_1",
      "usr_1",
      "t",
    ]);
    expect(request).toEqual(
      expect.arrayContaining(["ChangeRequest.id=cr_1", "Revision.id=rev_2", "Revision.changeRequestId=cr_1", "ChangeRequestContributor"]),
    );
    expect(request).not.toContain("ChangeRequest");
    expect(request).not.toContain("Revision");
    // The head moved, not the change request's status: the counts the triggers keep on its space did not change.
    expect(request).not.toContain("Space");
    expect(withTriggerWrites(new Map([["ChangeRequest", [requestAtOnce]]])).has("Space")).toBe(false);
    const opened = `UPDATE "public"."ChangeRequest" SET "status" = CAST($1::text AS "public"."ChangeRequestStatus") WHERE "public"."ChangeRequest"."id" = $2`;
    expect(withTriggerWrites(new Map([["ChangeRequest", [opened]]])).get("Space")).toEqual([
      expect.stringMatching(/^UPDATE "Space" SET "changeRequestsCount" = …, .* WHERE /),
    ]);
    // A SELECT that reads more than values is not one row of known values.
    const copied = `WITH "x" AS (INSERT INTO "public"."Revision" ("id", "spaceId") SELECT $1, (SELECT "spaceId" FROM "public"."Revision" WHERE "id" = $2) FROM "head") SELECT 1`;
    expect(writeOf(copied, ["rev_3", "rev_1"])).toContain("Revision");
    // A WITH that only reads writes nothing.
    expect(writtenTables(`WITH "s" AS (SELECT "id" FROM "Space") SELECT * FROM "s"`)).toEqual([]);
  });

  it("where the rows are not known — a predicate, raw SQL, an upsert — and what cascades: whole tables", () => {
    expect(writeOf(`UPDATE "public"."Comment" SET "status" = $1 WHERE "public"."Comment"."markdown" = $2`, ["resolved", "x"])).toEqual(
      expect.arrayContaining(["Comment", "Space", "ChangeRequest"]),
    );
    expect(writeOf(`UPDATE "Space" SET "title" = $1 WHERE "id" = $2`, ["t", "spc_A"])).toEqual(expect.arrayContaining(["Space"]));
    expect(
      writeOf(`INSERT INTO "public"."Member" ("organizationId","userId") VALUES ($1,$2) ON CONFLICT DO NOTHING`, ["org_1", "usr_1"]),
    ).toEqual(["Member"]);
    // A space purged: its comments and change requests go by cascade, their counts' parents with them.
    expect(writeOf(`DELETE FROM "public"."Space" WHERE "public"."Space"."id" = $1`, ["spc_A"])).toEqual(
      expect.arrayContaining(["Comment", "ChangeRequest", "CommentReaction", "Space"]),
    );
    // A comment deleted: its replies and reactions by cascade.
    const deleted = writeOf(`DELETE FROM "public"."Comment" WHERE "public"."Comment"."id" = $1`, ["cmt_1"]);
    expect(deleted).toEqual(expect.arrayContaining(["Comment", "CommentReaction"]));
    expect(
      drops(
        deleted,
        readTags(`SELECT "public"."Comment"."id" FROM "public"."Comment" WHERE "public"."Comment"."id" = $1`, ["rpl_of_cmt_1"]),
      ),
    ).toBe(true);
  });
});
