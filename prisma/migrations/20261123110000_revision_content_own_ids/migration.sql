-- Repair: revisions written before content records were looked up by own property only could hold
-- entries under names such as "constructor" or "hasOwnProperty" that are not ids (PATCH of
-- /content/page/constructor stored one). Each record keeps only the entries stored under their own
-- id (variables: only string values), as src/domains/content/model.ts readContent reads them.

UPDATE "Revision" r
SET "content" = r."content" || jsonb_build_object('pages', (
  SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) FROM jsonb_each(r."content"->'pages') e
  WHERE jsonb_typeof(e.value) = 'object' AND e.value->>'id' = e.key))
WHERE jsonb_typeof(r."content"->'pages') = 'object'
  AND EXISTS (SELECT 1 FROM jsonb_each(r."content"->'pages') e WHERE NOT (jsonb_typeof(e.value) = 'object' AND e.value->>'id' = e.key));

UPDATE "Revision" r
SET "content" = r."content" || jsonb_build_object('files', (
  SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) FROM jsonb_each(r."content"->'files') e
  WHERE jsonb_typeof(e.value) = 'object' AND e.value->>'id' = e.key))
WHERE jsonb_typeof(r."content"->'files') = 'object'
  AND EXISTS (SELECT 1 FROM jsonb_each(r."content"->'files') e WHERE NOT (jsonb_typeof(e.value) = 'object' AND e.value->>'id' = e.key));

UPDATE "Revision" r
SET "content" = r."content" || jsonb_build_object('reusableContents', (
  SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) FROM jsonb_each(r."content"->'reusableContents') e
  WHERE jsonb_typeof(e.value) = 'object' AND e.value->>'id' = e.key))
WHERE jsonb_typeof(r."content"->'reusableContents') = 'object'
  AND EXISTS (SELECT 1 FROM jsonb_each(r."content"->'reusableContents') e WHERE NOT (jsonb_typeof(e.value) = 'object' AND e.value->>'id' = e.key));

UPDATE "Revision" r
SET "content" = r."content" || jsonb_build_object('variables', (
  SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) FROM jsonb_each(r."content"->'variables') e
  WHERE jsonb_typeof(e.value) = 'string'))
WHERE jsonb_typeof(r."content"->'variables') = 'object'
  AND EXISTS (SELECT 1 FROM jsonb_each(r."content"->'variables') e WHERE NOT (jsonb_typeof(e.value) = 'string'));
