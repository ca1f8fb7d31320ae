/**
 * zod without its compiled fast path, for the whole `actors mcp` process.
 * Imported first by server.ts, so it runs before the SDK builds its own
 * schemas: zod reads the setting when a schema is made, not when it parses.
 * A session parses each schema a few times, and the fast path (code generated
 * and compiled on a schema's first parse) cost more than it saved: it was most
 * of a session's first tools/call.
 */
import * as z from 'zod/v4'

z.config({jitless: true})
