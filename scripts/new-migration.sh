#!/usr/bin/env bash
# Writes prisma/migrations/<timestamp>_<name>/migration.sql: the SQL from the committed schema
# (HEAD) to the working prisma/schema.prisma, with Prisma's JS schema engine (no download).
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?usage: npm run db:migration -- <name>}"
old="$(mktemp --suffix=.prisma)"
git show HEAD:prisma/schema.prisma > "$old"
dir="prisma/migrations/$(date -u +%Y%m%d%H%M%S)_${name}"
mkdir -p "$dir"
npx prisma migrate diff --from-schema-datamodel "$old" --to-schema-datamodel prisma/schema.prisma --script > "$dir/migration.sql"
rm -f "$old"
echo "wrote $dir/migration.sql"
