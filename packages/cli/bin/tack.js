#!/usr/bin/env node
// tack's own command line, run from the tack package this one depends on: this package only adds the optional
// packages the CLI draws with (the full-screen chat's and the PostgreSQL driver), found from here by Node.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = dirname(createRequire(import.meta.url).resolve('tack/package.json'));
await import(pathToFileURL(join(root, 'bin', 'tack.js')).href);
