import type { PrismaClient } from "../../generated/prisma/client.js";
import type { Config } from "../../config.js";
import { newId } from "../../core/ids.js";
import { fetchSource, ProcessError } from "./openapi.fetch.js";
import { lazy } from "../../core/support/lazy.js";
import { log } from "../../core/logger.js";

/** Parsing and validating a document (yaml, @readme/openapi-parser), loaded by the first spec processed. */
const documents = lazy(() => import("./openapi.document.js"));

/**
 * Background processing of OpenAPI specs: fetch the source URL (bounded in time and size), parse
 * JSON or YAML, validate, and record a new version. `processingState` moves
 * pending → progress → completed | failed; a failure sets `lastProcessErrorCode` and keeps
 * `lastVersion` (the last good version). Runs of one spec never overlap: a request arriving
 * during a run makes it run once more afterwards, with the spec's source at that time.
 */
export const PROCESSING_STATES = ["pending", "progress", "completed", "failed"] as const;
export type ProcessingState = (typeof PROCESSING_STATES)[number];

interface ProcessorServices {
  prisma: PrismaClient;
  config: Pick<Config, "openApiFetchTimeoutMs" | "openApiMaxBytes" | "outboundAllowedNetworks">;
}

class Processor {
  private runs = new Map<string, { again: boolean; done: Promise<void> }>();
  private closing = new AbortController();

  constructor(private services: ProcessorServices) {}

  /** Queues a run for the spec; returns once the spec is idle again. */
  schedule(specId: string): Promise<void> {
    if (this.closing.signal.aborted) return Promise.resolve();
    const current = this.runs.get(specId);
    if (current) {
      current.again = true;
      return current.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      await new Promise((resolve) => setImmediate(resolve)); // after the request has answered
      try {
        do {
          entry.again = false;
          await this.runOnce(specId, () => entry.again);
        } while (entry.again && !this.closing.signal.aborted);
      } finally {
        this.runs.delete(specId);
      }
    })();
    this.runs.set(specId, entry);
    return entry.done;
  }

  /** Resolves when no run is in progress. */
  async idle(): Promise<void> {
    while (this.runs.size) await Promise.all([...this.runs.values()].map((r) => r.done));
  }

  stop() {
    this.closing.abort();
  }

  /** One run; `superseded()` turns true when a newer request for the spec arrived meanwhile. */
  private async runOnce(specId: string, superseded: () => boolean) {
    const { prisma, config } = this.services;
    try {
      const spec = await prisma.openApiSpec.findUnique({ where: { id: specId }, select: { id: true, sourceURL: true } });
      if (!spec?.sourceURL) return;
      await prisma.openApiSpec.updateMany({ where: { id: specId }, data: { processingState: "progress" } });
      let outcome: { fileName: string; text: string } | ProcessError;
      try {
        const text = await fetchSource(spec.sourceURL, {
          config,
          timeoutMs: config.openApiFetchTimeoutMs,
          maxBytes: config.openApiMaxBytes,
          signal: this.closing.signal,
        });
        const { parseDocument, validateDocument } = await documents();
        const parsed = parseDocument(text);
        await validateDocument(parsed.document);
        outcome = { fileName: parsed.fileName, text };
      } catch (err) {
        if (!(err instanceof ProcessError)) throw err;
        outcome = err;
      }
      if (this.closing.signal.aborted) return; // left in progress: processed again at the next start
      if (superseded()) return; // the source changed meanwhile: this result is stale, the next run records one
      const now = new Date();
      if (outcome instanceof ProcessError) {
        await prisma.openApiSpec.updateMany({
          where: { id: specId },
          data: { processingState: "failed", lastProcessedAt: now, lastProcessErrorCode: outcome.code },
        });
        return;
      }
      const versionId = newId("OpenApiSpecVersion");
      await prisma.$transaction([
        prisma.openApiSpecVersion.create({
          data: { id: versionId, specId, url: spec.sourceURL, filesystem: { [outcome.fileName]: outcome.text }, createdAt: now },
        }),
        prisma.openApiSpec.update({
          where: { id: specId },
          data: { processingState: "completed", lastProcessedAt: now, lastProcessErrorCode: null, lastVersionId: versionId },
        }),
      ]);
    } catch (err) {
      // The spec was deleted meanwhile, or the server is closing: nothing to record.
      if (this.closing.signal.aborted) return;
      const gone = !(await prisma.openApiSpec.count({ where: { id: specId } }).catch(() => 0));
      if (!gone) log.error({ err }, `openapi: processing spec ${specId} failed`);
    }
  }
}

const processors = new WeakMap<PrismaClient, Processor>();

/** The processor of one gateway (keyed by its database client). */
export function processorFor(services: ProcessorServices): Processor {
  let processor = processors.get(services.prisma);
  if (!processor) {
    processor = new Processor(services);
    processors.set(services.prisma, processor);
  }
  return processor;
}

/**
 * Start-up hook: specs left pending or in progress (the server stopped mid-way) are processed
 * again. Returns a function that stops processing (aborting downloads in flight).
 */
export function resumeOpenApiProcessing(services: ProcessorServices) {
  const processor = processorFor(services);
  const done = services.prisma.openApiSpec
    .findMany({ where: { processingState: { in: ["pending", "progress"] } }, select: { id: true } })
    .then((specs) => Promise.all(specs.map((s) => processor.schedule(s.id))))
    .then(() => undefined)
    .catch((err) => log.error({ err }, "openapi: resuming spec processing failed"));
  return { done, stop: () => processor.stop() };
}
