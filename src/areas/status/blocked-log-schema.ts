import { Type } from 'typebox';

/** The blocked-packet log reader as /status and /dashboard report it (src/platform/connections.ts BlockedLogStatus). */
export const BlockedLogSchema = Type.Object({
  running: Type.Boolean(),
  source: Type.String(),
  pid: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'the log reader process (linux: ulogd), while it runs' })),
  adopted: Type.Optional(Type.Boolean({ description: 'the process was left running by an earlier API process and adopted at start' })),
  error: Type.Optional(Type.String()),
});
