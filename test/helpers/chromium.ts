import fs from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium (apt-get install chromium), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
export const hasChromium = fs.existsSync(CHROMIUM);

/**
 * Headless Chromium as these machines run it: without the background networking, component
 * updates and sync that a closed network refuses at every start.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}
