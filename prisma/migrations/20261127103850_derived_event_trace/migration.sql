-- AlterTable
ALTER TABLE "IntegrationEvent" ADD COLUMN     "skipReason" TEXT;

-- The first entries of an event's trace are derived from its row from now on ("Recorded <type>
-- event." at createdAt, and the reason a skipped event was not dispatched): the reasons move to
-- the new column, and the log rows that held those entries go.
UPDATE "IntegrationEvent" e SET "skipReason" = l."message"
  FROM "IntegrationEventLog" l
  WHERE l."eventId" = e."id" AND e."status" = 'skipped' AND l."message" LIKE 'Not dispatched: %';

DELETE FROM "IntegrationEventLog" l USING "IntegrationEvent" e
  WHERE l."eventId" = e."id"
    AND ((l."message" = ('Recorded ' || e."type" || ' event.') AND l."timestamp" = e."createdAt")
      OR (l."message" = e."skipReason" AND l."message" LIKE 'Not dispatched: %'));
