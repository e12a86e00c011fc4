// The vitest configuration Stryker runs: the project's, limited to the tests of the module
// named by DLINE_MUTATION_MODULE. Choosing the files here, not through Stryker's `testFiles`,
// keeps static mutants (values computed when a module loads) active while the module loads;
// with `testFiles` Stryker 9.6 activates them too late and counts them as survivors.
import base from "../../vitest.config.ts";
import { mutationModules } from "./modules.mjs";

const module = mutationModules.find((m) => m.name === process.env.DLINE_MUTATION_MODULE);
if (!module) throw new Error("DLINE_MUTATION_MODULE must name a module of test/mutation/modules.mjs");

export default { ...base, test: { ...base.test, include: module.testFiles } };
