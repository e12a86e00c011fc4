-- The chat fold (dline.chat_state) alone, driven by event streams as Connect JSON: no buffer,
-- no sidecar. Tool calls with their status and edits, dropped questions and interrupted
-- tasks, a restore's rewind, the task's total usage (cost unknown included), retries and
-- waits, checkpoint progress, and a reopened task (GetTask) replayed without duplicates.
local T = require("dline_test")
local fold = require("dline.chat_state")
local render = require("dline.chat_render")
local S = T.suite()

local function play(state, events)
  for i, e in ipairs(events) do
    e.seq = e.seq or tostring(i)
    fold.apply(state, e)
  end
  return state
end

local function rows(state)
  return vim.tbl_map(function(r) return { r.id, r.kind, r.toolStatus } end, fold.snapshot(state).rows)
end

local user = function(id, text)
  return { messageAdded = { message = { id = id, role = "MESSAGE_ROLE_USER", kind = "text", text = text } } }
end
local tool_row = function(id, status, partial, extra)
  return {
    messageFinalized = {
      message = vim.tbl_extend("force", {
        id = id,
        role = "MESSAGE_ROLE_TOOL",
        kind = "tool",
        tool = "write_to_file",
        text = "write_to_file a.txt",
        partial = partial,
        toolCall = {
          toolCallId = "c1",
          tool = "write_to_file",
          status = status,
          edits = { { path = "a.txt", status = "FILE_STATUS_ADDED", proposedText = "one\n" } },
        },
      }, extra or {}),
    },
  }
end

S.case("an edit's row goes from pending to done with its change; the question comes and goes", function()
  local state = play(fold.new("t1"), {
    { statusChanged = { status = "TASK_STATUS_RUNNING" } },
    user("u1", "write a.txt"),
    {
      messageAdded = {
        message = {
          id = "t1",
          role = "MESSAGE_ROLE_TOOL",
          kind = "tool",
          tool = "write_to_file",
          text = "write_to_file a.txt",
          partial = true,
          toolCall = { toolCallId = "c1", status = "TOOL_CALL_STATUS_PENDING" },
        },
      },
    },
    {
      ask = {
        askId = "k1",
        kind = "ASK_KIND_TOOL_APPROVAL",
        tool = "write_to_file",
        summary = "write_to_file a.txt",
        toolCallId = "c1",
        edits = { { path = "a.txt", status = "FILE_STATUS_ADDED", proposedText = "one\n" } },
      },
    },
    { statusChanged = { status = "TASK_STATUS_WAITING" } },
  })
  T.eq(fold.snapshot(state).pendingAskId, "k1", "waiting for k1")
  T.contains(table.concat(render.ask_lines(state), "\n"), ">> Approve write_to_file a.txt?", "the question")
  play(state, {
    { seq = "6", askResolved = { askId = "k1", approved = true } },
    { seq = "7", statusChanged = { status = "TASK_STATUS_RUNNING" } },
    { seq = "8", toolStarted = { toolCallId = "c1", tool = "write_to_file", messageId = "t1" } },
    vim.tbl_extend("force", tool_row("t1", "TOOL_CALL_STATUS_DONE", false), { seq = "9" }),
    {
      seq = "10",
      toolFinished = { toolCallId = "c1", ok = true, status = "TOOL_CALL_STATUS_DONE", edits = { { path = "a.txt" } } },
    },
  })
  T.eq(fold.snapshot(state).pendingAskId, nil, "answered")
  T.eq(rows(state), { { "u1", "text" }, { "t1", "tool", "TOOL_CALL_STATUS_DONE" } }, "the rows")
  T.eq(
    render.item_lines(fold.item(state, "t1")),
    { "### write_to_file a.txt  [done]", "  a.txt (new, +1 -0)", "" },
    "the row: named once, with its change"
  )
  -- A row read back without the texts says what happened to the file, no "+0 -0".
  local stored = {
    id = "t9",
    kind = "tool",
    text = "write_to_file b.txt",
    toolCall = { status = "TOOL_CALL_STATUS_DONE", edits = { { path = "b.txt", status = "FILE_STATUS_MODIFIED" } } },
  }
  T.eq(render.item_lines(stored)[2], "  b.txt", "no numbers of nothing")
  -- A row read back (GetTask) knows its checkpoint, not the kind: no "(checkpoint)" filler.
  local marker = render.item_lines({
    id = "a9",
    kind = "text",
    role = "MESSAGE_ROLE_ASSISTANT",
    text = "ok",
    checkpointId = "abcdef0123456789",
  })[3]
  T.eq(marker, "── checkpoint abcdef01", "the marker of a reloaded row")
  T.eq(render.checkpoint_on_line(marker), "abcdef01", "gc / gs find its id")
end)

S.case("a sidecar death: the question is dropped, the task interrupted, and a reopen of it shows the same", function()
  local events = {
    { statusChanged = { status = "TASK_STATUS_RUNNING" } },
    user("u1", "run it"),
    {
      messageAdded = {
        message = {
          id = "t1",
          role = "MESSAGE_ROLE_TOOL",
          kind = "command",
          tool = "execute_command",
          text = "execute_command make",
          partial = true,
          toolCall = {
            toolCallId = "c1",
            status = "TOOL_CALL_STATUS_PENDING",
            command = { command = "make", workingDirectory = "/w" },
          },
        },
      },
    },
    {
      ask = {
        askId = "k1",
        kind = "ASK_KIND_COMMAND_APPROVAL",
        summary = "execute_command make",
        command = { command = "make", workingDirectory = "/w" },
      },
    },
    { statusChanged = { status = "TASK_STATUS_WAITING" } },
  }
  local state = play(fold.new("t2"), events)
  T.eq(
    render.ask_lines(state),
    { ">> Run this command?  ga approve · gr deny · gA / gR with feedback", "   $ make", "   in /w", "" },
    "the exact command line"
  )
  play(state, {
    { seq = "6", askResolved = { askId = "k1", dropped = true } },
    {
      seq = "7",
      messageFinalized = {
        message = {
          id = "t1",
          role = "MESSAGE_ROLE_TOOL",
          kind = "command",
          text = "execute_command make",
          toolCall = {
            toolCallId = "c1",
            status = "TOOL_CALL_STATUS_INTERRUPTED",
            reason = "The sidecar stopped before this call finished.",
          },
        },
      },
    },
    { seq = "8", statusChanged = { status = "TASK_STATUS_INTERRUPTED" } },
  })
  local snap = fold.snapshot(state)
  T.eq(snap.status, "TASK_STATUS_INTERRUPTED", "interrupted")
  T.eq(snap.pendingAskId, nil, "the stale question is gone")
  T.contains(render.ask_lines(state)[1], "Not answered: the sidecar stopped", "said so")
  T.contains(table.concat(render.header_lines(state), "\n"), "R (or :Dline resume) continues it", "the Resume action")
  -- A reopened task whose sidecar died reads running with no owner: interrupted, no question.
  local reopened = fold.load(fold.new("t2"), {
    task = { id = "t2", title = "run it", status = "TASK_STATUS_WAITING", tokensIn = "10", tokensOut = "2" },
    messages = { { id = "u1", role = "MESSAGE_ROLE_USER", kind = "text", text = "run it" } },
    pendingAsk = { askId = "k1", kind = "ASK_KIND_COMMAND_APPROVAL" },
    lastSeq = "5",
    ownerPid = 0,
  })
  T.eq(fold.snapshot(reopened).status, "TASK_STATUS_INTERRUPTED", "reopened: interrupted")
  T.eq(fold.snapshot(reopened).pendingAskId, nil, "reopened: no question")
end)

S.case("a restore's rewind drops the rows after the message; a replay after GetTask adds nothing twice", function()
  local state = fold.load(fold.new("t3"), {
    task = { id = "t3", status = "TASK_STATUS_COMPLETED", tokensIn = "1000", tokensOut = "50", cost = 0.01 },
    messages = {
      { id = "u1", role = "MESSAGE_ROLE_USER", kind = "text", text = "first" },
      { id = "a1", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "answer one" },
      { id = "u2", role = "MESSAGE_ROLE_USER", kind = "text", text = "second" },
      { id = "a2", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "answer two" },
    },
    lastSeq = "20",
    ownerPid = 1,
  })
  -- Events up to seq 20 are in what GetTask returned: replaying them changes nothing.
  play(state, {
    { seq = "19", messageDelta = { messageId = "a2", text = " again" } },
    { seq = "20", usage = { tokensIn = "500", tokensOut = "20", cost = 0.005 } },
  })
  T.eq(fold.item(state, "a2").text, "answer two", "no duplicate text")
  T.eq(state.usage.tokensIn, 1000, "usage counted once")
  play(state, { { seq = "21", usage = { tokensIn = "300", tokensOut = "10", cost = 0, costUnknown = true } } })
  T.eq(
    render.usage_text(state.usage),
    "1.3k in, 60 out, $0.0100 + unknown",
    "totals of the task, part of the cost unknown"
  )
  play(state, { { seq = "22", rewound = { afterMessageId = "a1" } } })
  T.eq(rows(state), { { "u1", "text" }, { "a1", "text" } }, "rows after a1 are gone")
  play(state, { { seq = "23", rewound = { afterMessageId = "" } } })
  T.eq(rows(state), {}, "a rewind to the start leaves nothing")
end)

S.case(
  "a question a restore took away is not said to be lost with a stopped sidecar, whatever the status says",
  function()
    local state = play(fold.new("t9"), {
      { statusChanged = { status = "TASK_STATUS_RUNNING" } },
      user("u1", "write a.txt"),
      { ask = { askId = "k1", kind = "ASK_KIND_TOOL_APPROVAL", summary = "write_to_file a.txt" } },
      { statusChanged = { status = "TASK_STATUS_WAITING" } },
      -- The restore stops the run (its question dropped), then cuts the conversation; the status
      -- after it is the core's to word: the chat does not read meaning into its text.
      { askResolved = { askId = "k1", dropped = true } },
      { statusChanged = { status = "TASK_STATUS_INTERRUPTED", reason = "stopped" } },
      { rewound = { afterMessageId = "u1" } },
      { statusChanged = { status = "TASK_STATUS_INTERRUPTED", reason = "back at an earlier point" } },
    })
    T.eq(state.dropped_ask, nil, "no question left over")
    local lines = table.concat(render.ask_lines(state), "\n")
    T.truthy(not lines:find("sidecar stopped", 1, true), "the chat does not say the sidecar stopped: " .. lines)
  end
)

S.case("retries drop the failed attempt's answer, waits and checkpoint progress show as one line each", function()
  local state = play(fold.new("t4"), {
    {
      messageAdded = {
        message = { id = "r1", role = "MESSAGE_ROLE_ASSISTANT", kind = "reasoning", text = "", partial = true },
      },
    },
    { reasoningDelta = { messageId = "r1", text = "thinking" } },
    {
      messageAdded = {
        message = { id = "a1", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "partial", partial = true },
      },
    },
    {
      modelRetry = {
        attempt = 2,
        maxAttempts = 5,
        delayMs = "4000",
        reason = "overloaded",
        message = "retrying in 4 s (attempt 2 of 5)",
        discardedMessageIds = { "r1", "a1" },
      },
    },
  })
  T.eq(rows(state), {}, "the failed attempt's rows are gone")
  T.eq(state.notice, "retrying in 4 s (attempt 2 of 5): overloaded", "the retry line")
  play(state, {
    {
      seq = "9",
      modelWaiting = {
        waitedMs = "20000",
        timeoutMs = "300000",
        message = "waiting for the model: 20 s (gives up after 300 s)",
      },
    },
  })
  T.eq(
    render.notice_lines(state),
    { "~~ waiting for the model: 20 s (gives up after 300 s)", "" },
    "one line, replaced"
  )
  play(state, {
    {
      seq = "10",
      checkpointStatus = {
        state = "CHECKPOINT_STATE_INITIALIZING",
        phase = "staging",
        filesDone = "120",
        filesTotal = "5000",
      },
    },
  })
  T.contains(
    table.concat(render.header_lines(state), "\n"),
    "checkpoints initializing: staging 120 of 5000 files",
    "progress in the header"
  )
  play(state, { { seq = "11", checkpointStatus = { state = "CHECKPOINT_STATE_READY" } } })
  T.truthy(not table.concat(render.header_lines(state), "\n"):find("checkpoints", 1, true), "ready: nothing to say")
  play(state, { { seq = "12", usage = { tokensIn = "10", tokensOut = "5", cost = 0, costUnknown = true } } })
  T.contains(render.header_lines(state)[1], "10 in, 5 out, cost unknown", "cost unknown, never $0")
  -- Your own message is no answer; a tool call as the model's whole answer ends the wait line.
  play(state, {
    { seq = "13", modelWaiting = { message = "waiting for the model: 5 s" } },
    {
      seq = "14",
      messageAdded = { message = { id = "u2", role = "MESSAGE_ROLE_USER", kind = "text", text = "and also" } },
    },
  })
  T.eq(state.notice, "waiting for the model: 5 s", "still waiting")
  play(state, {
    {
      seq = "15",
      messageAdded = {
        message = { id = "t2", role = "MESSAGE_ROLE_TOOL", kind = "tool", text = "read_file a.txt", partial = true },
      },
    },
  })
  T.eq(render.notice_lines(state), {}, "the wait is over")
end)

S.case("a failed or cancelled task's header says how to continue it, like an interrupted one's", function()
  for status, word in pairs({ TASK_STATUS_FAILED = "Failed", TASK_STATUS_CANCELLED = "Cancelled" }) do
    local state = play(fold.new("t9"), { user("u1", "go"), { statusChanged = { status = status } } })
    T.contains(
      table.concat(render.header_lines(state), "\n"),
      word .. ". R (or :Dline resume) continues it.",
      status .. ": the Resume action"
    )
  end
  -- With the core's reason, live and from GetTask.
  local restored = play(fold.new("t9"), {
    user("u1", "go"),
    {
      statusChanged = {
        status = "TASK_STATUS_INTERRUPTED",
        reason = "the conversation was restored to an earlier point",
      },
    },
  })
  T.contains(
    table.concat(render.header_lines(restored), "\n"),
    "Interrupted: the conversation was restored to an earlier point. R (or :Dline resume) continues it.",
    "the reason of a restore"
  )
  local reopened = fold.new("t9")
  fold.load(reopened, {
    task = { id = "t9", title = "go", status = "TASK_STATUS_INTERRUPTED" },
    messages = { { id = "u1", role = "MESSAGE_ROLE_USER", kind = "text", text = "go" } },
    statusReason = "the conversation was restored to an earlier point",
    lastSeq = "7",
  })
  T.contains(
    table.concat(render.header_lines(reopened), "\n"),
    "Interrupted: the conversation was restored to an earlier point.",
    "reopened: GetTask's reason"
  )
  local done = play(fold.new("t9"), { user("u1", "go"), { statusChanged = { status = "TASK_STATUS_COMPLETED" } } })
  T.truthy(
    not table.concat(render.header_lines(done), "\n"):find("continues it", 1, true),
    "a completed task is continued with a message: no Resume hint"
  )
end)

S.case("a message sent while the model works shows as queued until it reaches the conversation", function()
  local state = play(fold.new("t8"), { user("u1", "go"), { statusChanged = { status = "TASK_STATUS_RUNNING" } } })
  T.eq(fold.queue(state, "and add tests").queued, true, "a change to draw")
  fold.queue(state, "then the docs")
  T.eq(render.queued_lines(state), {
    "## You (queued: sent when the current turn ends)",
    "and add tests",
    "",
    "## You (queued: sent when the current turn ends)",
    "then the docs",
    "",
  }, "both shown, in order")
  local change = fold.apply(state, user("u2", "and add tests"))
  T.eq(change.queued, true, "its row arrived")
  T.eq(state.queued, { "then the docs" }, "no longer queued")
  fold.apply(state, user("u3", "then the docs"))
  T.eq(render.queued_lines(state), {}, "nothing queued")
  fold.queue(state, "refused")
  fold.unqueue(state, "refused")
  T.eq(state.queued, {}, "a refused message is not queued")
end)

S.case(
  "an edit whose texts are left out says its sizes, binary, and the lines it writes; old rows as before",
  function()
    -- int64 sizes arrive as JSON strings; a row of an earlier version has none.
    local blob = {
      path = "blob.bin",
      status = "FILE_STATUS_MODIFIED",
      truncated = true,
      originalSize = "2000",
      proposedSize = "21",
      originalBinary = true,
      proposedText = "now text\nsecond line\n",
    }
    local row = {
      id = "t1",
      kind = "tool",
      text = "write_to_file blob.bin",
      toolCall = { status = "TOOL_CALL_STATUS_PENDING", edits = { blob } },
    }
    T.eq(
      render.item_lines(row)[2],
      "  blob.bin (binary, 2,000 bytes now, not shown; 21 bytes after, +2 lines)",
      "the chat row of a binary file rewritten as text"
    )
    T.eq(render.written_lines(blob), { "now text", "second line" }, "the lines the preview shows")
    local state = play(fold.new("t1"), {
      {
        ask = {
          askId = "k1",
          kind = "ASK_KIND_TOOL_APPROVAL",
          tool = "write_to_file",
          summary = "write_to_file blob.bin",
          edits = { blob },
        },
      },
      { statusChanged = { status = "TASK_STATUS_WAITING" } },
    })
    T.contains(
      table.concat(render.ask_lines(state), "\n"),
      "   blob.bin (binary, 2,000 bytes now, not shown; 21 bytes after, +2 lines)",
      "the question"
    )
    T.eq(
      require("dline.ask").approval_prompt(state.pending_ask),
      "Dline wants to: write_to_file blob.bin (binary, 2,000 bytes now, not shown; 21 bytes after, +2 lines)",
      "the prompt"
    )
    local function stat(edit)
      return render.edit_stat(
        vim.tbl_extend("force", { path = "x", status = "FILE_STATUS_MODIFIED", truncated = true }, edit)
      )
    end
    T.eq(
      stat({ originalSize = "2000000", proposedSize = "2000001" }),
      "(2,000,000 bytes now, not shown; 2,000,001 bytes after)",
      "too large, and so is what it writes: the sizes"
    )
    T.eq(
      stat({ originalSize = "5000000", proposedSize = "1", proposedText = "x" }),
      "(5,000,000 bytes now, not shown; 1 byte after, +1 line)",
      "too large to read, rewritten small"
    )
    T.eq(
      stat({ status = "FILE_STATUS_ADDED", proposedSize = "300000" }),
      "(new file; 300,000 bytes after)",
      "a large new file"
    )
    T.eq(
      stat({ status = "FILE_STATUS_DELETED", originalSize = 2000, originalBinary = true }),
      "(binary, 2,000 bytes now, not shown; deleted)",
      "a binary file deleted (sizes as numbers too)"
    )
    T.eq(stat({}), "(not shown: binary or large)", "a row of an earlier version: today's wording")
  end
)

S.case("a status read answered before a newer checkpoint event is not shown over it", function()
  local state = fold.new("t1", "task")
  -- Asked while the baseline ran; its answer ("initializing") arrives after the stream said "ready".
  local latest = fold.checkpoint_read(state)
  play(state, { { seq = "1", checkpointStatus = { state = "CHECKPOINT_STATE_READY" } } })
  T.eq(latest(state), false, "an event came meanwhile: the read's answer is older")
  -- A read asked after the last event is the latest word, but not for a chat whose state was reloaded.
  local fresh = fold.checkpoint_read(state)
  T.eq(fresh(state), true, "no event since: shown")
  T.eq(fresh(fold.new("t1", "task")), false, "another state (a reload): not shown")
end)

S.case(
  "checkpoint markers read back take their kind and restored mark from ListCheckpoints, until the next checkpoint",
  function()
    local state = fold.new("t1", "task")
    fold.load(state, {
      task = { status = "TASK_STATUS_INTERRUPTED" },
      ownerPid = "0",
      messages = {
        { id = "u1", role = "MESSAGE_ROLE_USER", kind = "text", text = "go" },
        { id = "t1", kind = "tool", text = "write_to_file a.txt", checkpointId = "aaaa000011112222" },
        { id = "t2", kind = "tool", text = "write_to_file b.txt", checkpointId = "bbbb000011112222" },
      },
    })
    local change = fold.set_checkpoints(state, {
      { id = "aaaa000011112222", kind = "CHECKPOINT_KIND_TURN", messageId = "t1", restored = true },
      { id = "bbbb000011112222", kind = "CHECKPOINT_KIND_TURN", messageId = "t2" },
      -- The undo point of the restore names the same message: not its marker.
      { id = "cccc000011112222", kind = "CHECKPOINT_KIND_BEFORE_RESTORE", messageId = "t1" },
    })
    T.eq(change.items, { "t1", "t2" }, "both markers redrawn")
    local function marker(id)
      local lines = render.item_lines(state.index[id])
      return lines[#lines - 1]
    end
    T.eq(marker("t1"), "── checkpoint aaaa0000 (turn, restored)", "the checkpoint restored to")
    T.eq(marker("t2"), "── checkpoint bbbb0000 (turn)", "its kind")
    T.eq(
      fold.set_checkpoints(state, {
        { id = "aaaa000011112222", kind = "CHECKPOINT_KIND_TURN", messageId = "t1", restored = true },
        { id = "bbbb000011112222", kind = "CHECKPOINT_KIND_TURN", messageId = "t2" },
      }).items,
      {},
      "the same answer again: nothing to redraw"
    )
    -- A checkpoint saved since: the task went on from there, nothing is "restored" any more.
    local saved = fold.apply(state, {
      seq = "50",
      checkpointSaved = { checkpointId = "dddd000011112222", messageId = "t2", kind = "CHECKPOINT_KIND_COMPLETION" },
    })
    T.eq(saved.items, { "t1", "t2" }, "the old mark and the new marker redrawn")
    T.eq(marker("t1"), "── checkpoint aaaa0000 (turn)", "no longer restored")
  end
)

S.case("a file restore made in any window marks its checkpoint restored; its Undo takes the mark away", function()
  local state = fold.new("t1", "task")
  fold.load(state, {
    task = { status = "TASK_STATUS_COMPLETED" },
    ownerPid = "0",
    messages = {
      { id = "u1", role = "MESSAGE_ROLE_USER", kind = "text", text = "go" },
      { id = "t1", kind = "tool", text = "write_to_file a.txt", checkpointId = "aaaa000011112222" },
      { id = "t2", kind = "tool", text = "write_to_file b.txt", checkpointId = "bbbb000011112222" },
    },
  })
  local function marker(id)
    local lines = render.item_lines(state.index[id])
    return lines[#lines - 1]
  end
  local change = fold.apply(state, {
    seq = "10",
    filesRestored = { checkpointId = "aaaa000011112222", undoCheckpointId = "cccc000011112222" },
  })
  T.eq(change.items, { "t1" }, "the marker restored to is redrawn")
  T.eq(marker("t1"), "── checkpoint aaaa0000 (restored)", "restored")
  -- The Undo restores the "before restore" checkpoint, which no row shows.
  change = fold.apply(state, {
    seq = "11",
    filesRestored = { checkpointId = "cccc000011112222", undoCheckpointId = "dddd000011112222", undo = true },
  })
  T.eq(change.items, { "t1" }, "the old mark is redrawn")
  T.eq(marker("t1"), "── checkpoint aaaa0000", "no longer restored")
end)

S.case("a command's result shows its output folded and how it ended; no output says so", function()
  local function command(output, status, reason)
    return render.item_lines({
      id = "c1",
      kind = "command",
      text = "true",
      toolCall = {
        status = status or "TOOL_CALL_STATUS_DONE",
        command = { command = "true" },
        output = output,
        reason = reason,
      },
    })
  end
  T.eq(
    command("No output.\nExit code: 0"),
    { "### $ true  [done]", "  no output · Exit code: 0", "" },
    'no output: said, not "2 lines of output"'
  )
  T.eq(
    command("No output.\nExit code: 1", "TOOL_CALL_STATUS_FAILED", "Exit code: 1"),
    { "### $ true  [failed]", "  Exit code: 1", "  no output", "" },
    "failed with no output: how it ended once"
  )
  T.eq(
    command("Output:\nhello\nworld\nExit code: 0"),
    { "### $ true  [done]", render.OUTPUT_PREFIX .. "hello", render.OUTPUT_PREFIX .. "world", "  Exit code: 0", "" },
    "the output's own lines folded (2), how it ended apart"
  )
  T.eq(
    command("some other text\nsecond"),
    { "### $ true  [done]", render.OUTPUT_PREFIX .. "some other text", render.OUTPUT_PREFIX .. "second", "" },
    "another text: shown as it is"
  )
end)

S.case("rewound to before its first message: untitled, nothing to resume; the next message names the task", function()
  local state = play(fold.new("t9"), {
    user("u1", "Greet the world"),
    { statusChanged = { status = "TASK_STATUS_COMPLETED" } },
    { rewound = { afterMessageId = "" } },
    {
      statusChanged = {
        status = "TASK_STATUS_INTERRUPTED",
        reason = "the conversation was restored to an earlier point",
      },
    },
  })
  local lines = render.header_lines(state)
  T.eq(lines[2], "(untitled task)", "no title (before: the old first message)")
  T.eq(lines[3], "Restored to before its first message: send a message to start it again.", "no Resume hint")
  play(state, { user("u2", "Greet everyone\nand more"), { statusChanged = { status = "TASK_STATUS_RUNNING" } } })
  T.eq(render.header_lines(state)[2], "Greet everyone", "named by the new first message")
  -- Rewound to a later message: the title stays.
  play(
    state,
    { { messageAdded = { message = { id = "a1", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "ok" } } } }
  )
  play(state, { { rewound = { afterMessageId = "u2" } } })
  T.eq(state.title, "Greet everyone", "kept")
  -- Read back (GetTask): Connect JSON leaves the empty title out; the chat's old one must not stay.
  local reloaded = fold.load(state, { task = { id = "t9", status = "TASK_STATUS_INTERRUPTED" }, messages = {} })
  T.eq(reloaded.title, "", "the core's empty title")
  T.eq(render.header_lines(reloaded)[2], "(untitled task)", "shown as untitled")
  local named = fold.load(fold.new("t9"), {
    task = { id = "t9", status = "TASK_STATUS_COMPLETED" },
    messages = { { id = "u1", role = "MESSAGE_ROLE_USER", kind = "text", text = "Untitled in the index" } },
  })
  T.eq(named.title, "Untitled in the index", "no title but a first message: named by it, as events name it")
end)

return S
