import { Type } from 'typebox';
import { NullableInteger, NullableString } from './schemas.js';

/** Status fields every supervised daemon reports besides `running` and `version` (see daemon-record.ts). */
export const DaemonReportFields = {
  pid: Type.Union([Type.Integer(), Type.Null()], { description: 'process id of the running daemon' }),
  config_version: NullableInteger({ description: 'configuration version the running file was rendered from; null when rendered from changes not recorded as a version' }),
  config_sha256: NullableString({ description: 'sha256 of the configuration file the daemon runs' }),
};
