/**
 * The supervisor's side of `inbox: stdin` (SPEC: Generations and steering):
 * it holds the command's stdin open and writes each message `actors send`
 * journaled for this generation as one line, in order, then records how far
 * it got (`inbox-stdin.json`) so `send` can report the line was written.
 * Woken by changes in the state dir; only re-reads the inbox when it changed.
 */
import {statSync} from 'node:fs'
import type {Writable} from 'node:stream'
import {writeJsonAtomic} from '../../base/platform/state-files.js'
import {Doorbell} from '../../base/bell/doorbell.js'
import {inboxFile, messageLine, readInbox, readStdinAck, stdinAckFile} from '../../kernel/runs/inbox.js'

export class StdinPump {
  private readonly targets = new Set<Writable>()
  private delivered: number
  private seen = ''
  private readonly stop = new AbortController()

  constructor(
    private readonly dir: string,
    private readonly generation: number,
  ) {
    this.delivered = readStdinAck(dir, generation)
  }

  /** A step's stdin: messages go to every running step. */
  attach(stream: Writable): void {
    stream.on('error', () => this.targets.delete(stream))
    stream.on('close', () => this.targets.delete(stream))
    this.targets.add(stream)
    this.seen = ''
    this.flush()
  }

  /** Deliver until close(). */
  async run(): Promise<void> {
    const bell = new Doorbell(this.dir, 1000)
    try {
      while (!this.stop.signal.aborted) {
        bell.clear()
        this.flush()
        await bell.next(Infinity, this.stop.signal)
      }
    } finally {
      bell.close()
    }
  }

  close(): void {
    this.stop.abort()
    for (const target of this.targets) target.end()
  }

  private flush(): void {
    if (this.targets.size === 0) return
    let stamp: string
    try {
      const stat = statSync(inboxFile(this.dir))
      stamp = `${stat.size}:${stat.mtimeMs}`
    } catch {
      return
    }
    if (stamp === this.seen) return
    this.seen = stamp
    let records
    try {
      records = readInbox(this.dir).filter(
        (r) => r.generation === this.generation && r.via === 'stdin' && r.seq > this.delivered,
      )
    } catch {
      return
    }
    if (records.length === 0) return
    for (const record of records) {
      for (const target of this.targets) target.write(messageLine(record.message) + '\n')
      this.delivered = record.seq
    }
    try {
      writeJsonAtomic(stdinAckFile(this.dir), {generation: this.generation, seq: this.delivered})
    } catch {}
  }
}
