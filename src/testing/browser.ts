import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium } from "playwright-core";

/** Debian's Chromium, which `.ci/run` installs; the browser tests drive it through playwright-core. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

export function chromiumAvailable(): boolean {
  return fs.existsSync(CHROMIUM_PATH);
}

/** CI sets this so that a missing Chromium fails the browser tests instead of skipping them. */
export const chromiumRequired = process.env.FLYWHEEL_REQUIRE_CHROMIUM === "1";

/** Headless Chromium on a fresh profile, with everything that would reach the network turned off. */
export async function launchChromium(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  return {
    context,
    close: async () => {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Builds the web UI into a fresh folder (as `npm run build` does into dist/ui) and returns it. */
export function buildUiInto(): string {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-ui-build-"));
  const script = fileURLToPath(new URL("../ui/build.mjs", import.meta.url));
  const result = spawnSync(process.execPath, [script, "--out", out], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`UI build failed: ${result.stderr || result.stdout}`);
  return out;
}
