#!/usr/bin/env node
// Runs the compiled CLI (`npm run build` creates dist/).
import "../dist/cli/main.js";
