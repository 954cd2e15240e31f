import fs from "node:fs";
import path from "node:path";
import { projectRoot } from "./config.js";

/** The package version, read once from package.json. */
export const flywheelVersion: string = (JSON.parse(fs.readFileSync(path.join(projectRoot, "package.json"), "utf8")) as { version: string }).version;
