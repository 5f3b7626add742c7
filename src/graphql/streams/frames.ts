import type { WebSocket } from "ws";
import type { Writable } from "node:stream";

/** Messages that ws frames (on a socket with extensions) are sent as text. */
export const TEXT = { binary: false } as const;
const CLOSE = Buffer.from("}");

/** Shorter frames are copied into one buffer; longer ones reuse the shared payloads, as per-socket copies forced full GCs (see docs/performance.md). */
const COPIED_FRAMES_BELOW = Buffer.poolSize >>> 1;

const ARENA_BYTES = 64 * 1024;

/** Bytes of the frame of a `next` message of `length` bytes: the header of an unmasked frame (RFC 6455 5.2), then the message. */
function frameBytes(length: number): number {
  return (length < 126 ? 2 : length < 65_536 ? 4 : 10) + length;
}

/** Writes at `at` a server frame's head (RFC 6455 5.2: final, text, unmasked), then `prefix`; returns where the payload goes. */
function writeHead(target: Buffer, at: number, prefix: Buffer, payloadLength: number): number {
  const length = prefix.length + payloadLength + CLOSE.length;
  target[at++] = 0x81;
  if (length < 126) target[at++] = length;
  else if (length < 65_536) {
    target[at] = 126;
    at = target.writeUInt16BE(length, at + 1);
  } else {
    target[at] = 127;
    target.writeUInt32BE(Math.floor(length / 2 ** 32), at + 1);
    at = target.writeUInt32BE(length >>> 0, at + 5);
  }
  return at + prefix.copy(target, at);
}

/**
 * One reused buffer a group builds frames in: a buffer per socket and pass forced full GCs (see docs/performance.md).
 * Frames a socket took whole are overwritten next; frames it only partly handed to the kernel are held intact.
 */
export class FrameArena {
  private buffer: Buffer | undefined;
  /** The frames last built: bytes `start` to `end` of `buffer`. */
  private start = 0;
  private end = 0;
  private held = false;

  take(length: number): Buffer {
    let at = this.held ? this.end : this.start;
    this.held = false;
    if (length > ARENA_BYTES >>> 2) {
      this.start = this.end = at;
      return Buffer.allocUnsafe(length);
    }
    if (!this.buffer || at + length > ARENA_BYTES) {
      this.buffer = Buffer.allocUnsafeSlow(ARENA_BYTES);
      at = 0;
    }
    this.start = at;
    this.end = at + length;
    return this.buffer.subarray(this.start, this.end);
  }

  hold(): void {
    this.held = true;
  }
}

/** The frames of `next` messages `log[first..end)` for `prefix`'s operation, as buffers to write in order. */
export function buildFrames(arena: FrameArena, prefix: Buffer, log: Buffer[], first: number, end: number): Buffer[] {
  let length = 0;
  let payloadBytes = 0;
  for (let i = first; i < end; i++) {
    length += frameBytes(prefix.length + log[i]!.length + CLOSE.length);
    payloadBytes += log[i]!.length;
  }
  const copied = length < COPIED_FRAMES_BELOW;
  const own = arena.take(copied ? length : length - payloadBytes);
  const chunks: Buffer[] = [];
  let at = 0;
  let start = 0;
  for (let i = first; i < end; i++) {
    const payload = log[i]!;
    at = writeHead(own, at, prefix, payload.length);
    if (copied) at += payload.copy(own, at);
    else {
      chunks.push(own.subarray(start, at), payload);
      start = at;
    }
    at += CLOSE.copy(own, at);
  }
  chunks.push(copied ? own : own.subarray(start, at));
  return chunks;
}

/** A `next` message whole, for ws to frame (a socket with extensions, a final refusal). */
export function nextMessage(prefix: Buffer, payload: Buffer): Buffer {
  return Buffer.concat([prefix, payload, CLOSE]);
}

/** A WebSocket's TCP stream (ws keeps it as `_socket`, not declared by its types). */
export function tcpOf(socket: WebSocket): Writable | undefined {
  return (socket as unknown as { _socket?: Writable })._socket;
}

/** The TCP stream to write frames to directly (no extensions); ask once, as ws's `extensions` getter builds a string per call. */
export function rawSocket(socket: WebSocket): Writable | undefined {
  return socket.extensions === "" ? tcpOf(socket) : undefined;
}

/** Bytes a subscriber's socket has been given and not yet handed to the network. */
export function pendingBytes(m: { socket: WebSocket; raw: Writable | undefined }): number {
  return m.raw ? m.raw.writableLength : m.socket.bufferedAmount;
}
