import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Version from package.json; commit and build time from the environment the build ran in, when given. */
export const BUILD = {
  version: packageJson.version,
  gitCommit: process.env.BULWARK_GIT_COMMIT ?? null,
  builtAt: process.env.BULWARK_BUILT_AT ?? null,
};
