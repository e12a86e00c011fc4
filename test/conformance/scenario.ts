/**
 * The one scenario every client runs (see README.md beside this file): a task that reads,
 * edits and creates files, asks a follow-up question and completes; then compare with the
 * baseline checkpoint, restore files only to it, edit the last message sent (the follow-up
 * answer) with Restore All, and
 * delete the task. Each driver plays it through its own client; the snapshots must match.
 */
import type { ModelServerScript } from "../model-server/script.js";

export const TEST_KEY = "sk-test-SECRET-0123456789";
/** The model name the CLI takes from OPENAI_MODEL; the Lua driver configures the same profile. */
export const MODEL = "scripted-model";

export interface Scenario {
  files: Record<string, string>;
  prompt: string;
  script: ModelServerScript;
  /** Follow-up questions are answered with their first option (the CLI's `--yes` does so). */
  followupAnswer: "first-option";
  /** The text the last user message (the follow-up answer) is edited to, with Restore All. */
  editedAnswer: string;
}

export const scenario: Scenario = {
  files: { "hello.txt": "hello\n", "src/app.txt": "app v1\n" },
  prompt: "Greet the world",
  script: {
    apiKey: TEST_KEY,
    turns: [
      {
        text: "Let me read the greeting.",
        toolCalls: [{ name: "read_file", input: { path: "hello.txt" } }],
        usage: { input: 100, output: 20 },
      },
      {
        text: "Updating the greeting and adding notes.",
        toolCalls: [
          {
            name: "replace_in_file",
            input: { path: "hello.txt", diff: "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
          },
          { name: "write_to_file", input: { path: "notes.md", content: "# Notes\ncreated by dline\n" } },
        ],
        usage: { input: 200, output: 40 },
      },
      {
        toolCalls: [
          { name: "ask_followup_question", input: { question: "Which tone?", options: ["formal", "casual"] } },
        ],
        usage: { input: 250, output: 10 },
      },
      {
        text: "Done.",
        toolCalls: [{ name: "attempt_completion", input: { result: "Greeting updated in a formal tone." } }],
        usage: { input: 300, output: 5 },
      },
      // Spare turns: if a client's edit continues the task, both must consume the same ones.
      {
        text: "Continuing after the edit.",
        toolCalls: [{ name: "attempt_completion", input: { result: "Done again." } }],
      },
      { text: "Spare." },
    ],
  },
  followupAnswer: "first-option",
  editedAnswer: "casual, please",
};
