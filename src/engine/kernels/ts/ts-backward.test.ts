import { describeBackwardConformance } from "../../../testing/backward-conformance.js";
import { TsKernels } from "./index.js";

describeBackwardConformance("TypeScript", () => new TsKernels());
