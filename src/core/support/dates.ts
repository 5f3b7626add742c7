/**
 * `date.toISOString()`, written out from the date's UTC fields: several times faster, and every
 * object the API answers carries dates — a list of 50 spaces
 * serializes a hundred. A year outside 0–9999 (written with a sign and six digits) and an
 * invalid date (a RangeError) are left to `toISOString` itself. test/server/dates.property.test.ts
 * compares both on generated dates.
 */
export function isoString(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  return (
    (year < 1000 ? String(year).padStart(4, "0") : String(year)) +
    "-" +
    two(date.getUTCMonth() + 1) +
    "-" +
    two(date.getUTCDate()) +
    "T" +
    two(date.getUTCHours()) +
    ":" +
    two(date.getUTCMinutes()) +
    ":" +
    two(date.getUTCSeconds()) +
    "." +
    three(date.getUTCMilliseconds()) +
    "Z"
  );
}

function two(n: number): string {
  return n < 10 ? "0" + n : String(n);
}

function three(n: number): string {
  return n < 10 ? "00" + n : n < 100 ? "0" + n : String(n);
}
