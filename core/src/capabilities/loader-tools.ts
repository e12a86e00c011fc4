/** load_workflow and load_skill: read-only tools built per turn over the enabled entries. */
import * as fs from "node:fs";
import * as path from "node:path";
import { optionalString, requireNonEmptyString, ToolError, ok, type ToolDefinition } from "../agent/index.js";
import type { SkillEntry, WorkflowEntry } from "./catalog.js";
import { MAX_CAPABILITY_FILE_BYTES } from "./file-cache.js";

export function loadWorkflowTool(workflows: ReadonlyMap<string, WorkflowEntry>): ToolDefinition {
  const names = [...workflows.keys()];
  return {
    name: "load_workflow",
    description:
      "Load a workflow: a step-by-step procedure the person wrote, which you then follow. " +
      `Available workflows: ${names.map((n) => `"${n}"`).join(", ")}.`,
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", description: "The workflow's name.", enum: names } },
      required: ["name"],
    },
    readOnly: true,
    approvalCategory: () => undefined,
    async execute(input) {
      const name = requireNonEmptyString(input, "name", "load_workflow");
      const workflow = workflows.get(name);
      if (!workflow)
        throw new ToolError(
          `There is no enabled workflow named "${name}". Available: ${names.join(", ") || "none"}.`,
          "not_found",
        );
      return ok(`<workflow name="${workflow.name}">\n${workflow.text.trim()}\n</workflow>`);
    },
  };
}

export function loadSkillTool(skills: ReadonlyMap<string, SkillEntry>): ToolDefinition {
  const names = [...skills.keys()];
  return {
    name: "load_skill",
    description:
      "Load a skill's instructions (listed under \"Skills\" in the rules), or one of the skill's files with `file`. " +
      "Load a skill before doing the kind of work it describes.",
    inputSchema: {
      type: "object",
      properties: {
        name: { type: "string", description: "The skill's name.", enum: names },
        file: {
          type: "string",
          description: "Optional: one of the skill's files (as listed when the skill is loaded).",
        },
      },
      required: ["name"],
    },
    readOnly: true,
    approvalCategory: () => undefined,
    async execute(input) {
      const name = requireNonEmptyString(input, "name", "load_skill");
      const skill = skills.get(name);
      if (!skill)
        throw new ToolError(
          `There is no enabled skill named "${name}". Available: ${names.join(", ") || "none"}.`,
          "not_found",
        );
      const file = optionalString(input, "file", "load_skill");
      if (file) {
        // Only the files listed for the skill: no path leaves its folder.
        if (!skill.files.includes(file))
          throw new ToolError(
            `The skill "${name}" has no file "${file}". Its files: ${skill.files.join(", ") || "none"}.`,
            "not_found",
          );
        const full = path.join(skill.dir, file);
        // A workspace's skill file is read only inside the workspace (it may have become a link since).
        if (skill.boundary && !skill.boundary.allows(full))
          throw new ToolError(
            `The skill file "${file}" links outside the workspace; it is not read.`,
            "permission_denied",
          );
        // A regular file only, opened without blocking (a FIFO in a repository never hangs the
        // sidecar), and read no further than the bound.
        const fd = fs.openSync(full, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
        let text: string;
        let stat: fs.Stats;
        try {
          stat = fs.fstatSync(fd);
          if (!stat.isFile()) throw new ToolError(`The skill file "${file}" is not a regular file.`);
          const buffer = Buffer.alloc(Math.min(stat.size, MAX_CAPABILITY_FILE_BYTES));
          text = buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, 0)).toString("utf8");
        } finally {
          fs.closeSync(fd);
        }
        return ok(
          `<skill_file skill="${name}" path="${file}"${stat.size > MAX_CAPABILITY_FILE_BYTES ? ' truncated="true"' : ""}>\n${text}\n</skill_file>`,
        );
      }
      const files = skill.files.length
        ? `\n\nFiles of this skill (load one with load_skill and "file"):\n${skill.files.map((f) => `- ${f}`).join("\n")}`
        : "";
      return ok(`<skill name="${skill.name}">\n${skill.instructions.trim()}${files}\n</skill>`);
    },
  };
}
