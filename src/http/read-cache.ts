/**
 * Serialised answers of configuration reads, kept per configuration generation. Configuration is read far more
 * often than it changes (dashboards, Terraform refresh), so a list is built, serialised and hashed once per
 * change instead of once per request.
 */
import type { FastifyReply } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { ConfigObject, ConfigStore } from '../store/config-store.js';
import { setEntityTag, strongTagOf } from './conditional.js';

/** What a read answers before serialisation: the body and the headers that go with it (e.g. X-Total-Count). */
export interface ReadAnswer {
  body: unknown;
  headers?: Record<string, string>;
  /**
   * For a list of records made by `recordOf`: the schema of one record. Each record is then serialised on its
   * own and its text remembered, so after a change only the changed records are serialised again.
   */
  itemSchema?: object;
}

interface Entry {
  generation: string;
  /** Encoded once: sending a Buffer spares encoding (and measuring) the text on every request. */
  bytes: Buffer;
  tag: string;
  headers: Record<string, string>;
}

/** Bounds the memory: a 10,000-rule page is about 6 MB, and distinct query strings are the caller's choice. */
const MAX_CACHED_BYTES = 32 * 1024 * 1024;

export class ReadCache {
  private readonly entries = new LRUCache<string, Entry>({
    maxSize: MAX_CACHED_BYTES,
    // Entries larger than the whole budget are never stored (lru-cache refuses them), only served.
    sizeCalculation: (entry) => Math.max(1, entry.bytes.length),
  });

  /** Records by the stored object they were made from: stored objects are replaced on change, never mutated. */
  private readonly records = new WeakMap<ConfigObject, object>();
  private readonly recordTexts = new WeakMap<object, string>();

  constructor(private readonly store: ConfigStore) {
    // The generation check alone keeps stale answers from being served; dropping them at once frees the memory.
    store.onChange(({ kind }) => {
      if (kind === '*') return this.entries.clear();
      const prefix = `${kind}\n`;
      for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
    });
  }

  /**
   * Answers `key` from what was serialised while `kind` was at its current generation, or produces, serialises
   * (with the route's own response serialiser, so write-only fields stay out exactly as without the cache) and
   * remembers it. `key` must name everything else the answer depends on (path parameters, the parsed query);
   * answers that depend on the caller or on state outside the store must not come through here.
   */
  send(reply: FastifyReply, kind: string, key: string, produce: () => ReadAnswer): FastifyReply {
    const cacheKey = `${kind}\n${key}`;
    const generation = this.store.generation(kind);
    let entry = this.entries.get(cacheKey);
    if (entry === undefined || entry.generation !== generation) {
      const answer = produce();
      const bytes = Buffer.from(this.serialize(reply, answer));
      entry = { generation, bytes, tag: strongTagOf(bytes), headers: answer.headers ?? {} };
      this.entries.set(cacheKey, entry);
    }
    const served: Entry = entry;
    reply.headers(served.headers);
    setEntityTag(reply, served.tag);
    reply.header('content-type', 'application/json; charset=utf-8');
    return reply.send(served.bytes);
  }

  /**
   * The record `toRecord` makes of a stored object, made once per object. Only for records that depend on the
   * object alone (no fields computed from outside the store); the caller must not change it.
   */
  recordOf<T extends object>(object: ConfigObject, toRecord: (object: ConfigObject) => T): T {
    let record = this.records.get(object) as T | undefined;
    if (record === undefined) {
      record = toRecord(object);
      this.records.set(object, record);
    }
    return record;
  }

  /** With the route's own serialisers (fast-json-stringify over its response schema), which answer text. */
  private serialize(reply: FastifyReply, answer: ReadAnswer): string {
    if (!answer.itemSchema || !Array.isArray(answer.body)) return reply.serialize(answer.body) as string;
    const serializeItem = reply.compileSerializationSchema(answer.itemSchema as { [key: string]: unknown }, '200');
    const texts = answer.body.map((item: { [key: string]: unknown }) => {
      let text = this.recordTexts.get(item);
      if (text === undefined) {
        text = serializeItem(item);
        this.recordTexts.set(item, text);
      }
      return text;
    });
    return `[${texts.join(',')}]`;
  }
}
