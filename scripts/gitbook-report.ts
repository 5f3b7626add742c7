/**
 * Sums up a GitBook compatibility report written by the test suite:
 *
 *   rm -f /tmp/gitbook.jsonl
 *   GITBOOK_REPORT=/tmp/gitbook.jsonl npx vitest run
 *   npx tsx scripts/gitbook-report.ts /tmp/gitbook.jsonl [--recheck]
 *
 * (`--recheck` validates the recorded answers again with the current checker and allow-list)
 * prints how many REST answers validate against GitBook's schemas as they are and with the
 * allow-list (test/gitbook-allowlist.ts), then each difference by operation and field with
 * the number of answers it was seen in.
 */
import fs from "node:fs";

const file = process.argv[2];
if (!file) {
  console.error("usage: tsx scripts/gitbook-report.ts <report.jsonl>");
  process.exit(2);
}
let lines = fs
  .readFileSync(file, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l));
if (process.argv.includes("--recheck")) {
  // Checks the recorded answers again with the current checker and allow-list.
  const { gitbookChecker, allowed: allowedBy } = await import("../test/helpers/gitbook.js");
  const checker = gitbookChecker();
  lines = lines.map((l) => {
    const r = checker.differences(l.method, l.template, l.status, l.body)!;
    const allowed = (d: any) => allowedBy(d)?.reason ?? null;
    const differences = r.differences.map((d) => ({ ...d, allowed: allowed(d) }));
    return { ...l, differences, valid: differences.length === 0, validWithAllowList: differences.every((d) => d.allowed) };
  });
}
const operations = new Set(lines.map((l) => l.operation));
const valid = lines.filter((l) => l.valid).length;
const explained = lines.filter((l) => l.validWithAllowList).length;
console.log(`${lines.length} answers of ${operations.size} GitBook operations compared`);
console.log(`${valid} of ${lines.length} validate against GitBook's schemas as they are`);
console.log(`${explained} of ${lines.length} validate once the allow-list's differences are set aside`);

const byDiff = new Map<string, { count: number; allowed: string | null; operations: Set<string> }>();
for (const l of lines) {
  for (const d of l.differences) {
    const key = `${l.operation} ${l.status}  ${d.path || "/"}  ${d.keyword}: ${d.message}`;
    const entry = byDiff.get(key) ?? { count: 0, allowed: d.allowed, operations: new Set() };
    entry.count++;
    byDiff.set(key, entry);
  }
}
const rows = [...byDiff.entries()].sort((a, b) => Number(!!a[1].allowed) - Number(!!b[1].allowed) || a[0].localeCompare(b[0]));
const open = rows.filter(([, v]) => !v.allowed);
console.log(`\n${open.length} differences not explained by the allow-list:`);
for (const [k, v] of open) console.log(`  ${v.count}×  ${k}`);
const ok = rows.filter(([, v]) => v.allowed);
console.log(`\n${ok.length} differences the allow-list explains:`);
for (const [k, v] of ok) console.log(`  ${v.count}×  ${k}`);
