package dev.dline.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.connectrpc.Code;
import dline.v1.CheckpointOuterClass.Checkpoint;
import dline.v1.CheckpointOuterClass.CheckpointKind;
import dline.v1.CheckpointOuterClass.EditMessageMode;
import dline.v1.CheckpointOuterClass.EditMessageResponse;
import dline.v1.Settings.Profile;
import dline.v1.Task.Ask;
import dline.v1.Task.MessageRole;
import dline.v1.Task.TaskEvent;
import dline.v1.Task.TaskStatus;
import dline.v1.Task.UiMessage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** A plugin written in Java drives a whole task through DlineFutures, against the real sidecar. */
class DlineFuturesTest {
    private static final long WAIT = 60;

    private static final String SCRIPT = """
        {"turns": [
          {"text": "Writing it.", "toolCalls": [{"name": "write_to_file", "input": {"path": "java.txt", "content": "from java\\n"}}]},
          {"toolCalls": [{"name": "attempt_completion", "input": {"result": "Wrote java.txt."}}]}
        ]}
        """;

    private static TaskEvent await(BlockingQueue<TaskEvent> events, String what, Predicate<TaskEvent> predicate) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT);
        while (System.nanoTime() < deadline) {
            TaskEvent event = events.poll(1, TimeUnit.SECONDS);
            if (event != null && predicate.test(event)) return event;
        }
        throw new AssertionError("no " + what + " within " + WAIT + " s");
    }

    @Test
    void aJavaPluginRunsATaskThroughFuturesAndAListener() throws Exception {
        TestRoots roots = new TestRoots("dline-java-");
        Path workspace = Files.createDirectories(roots.getBase().resolve("workspace"));
        try (ModelServer model = ModelServer.Companion.start(roots.getBase(), SCRIPT);
             DlineFutures dline = DlineFutures.start(roots.launch(Repo.INSTANCE.sidecarBinary(), Map.of()))) {
            dline.initialize("junit-java", "1", List.of(workspace.toString())).get(WAIT, TimeUnit.SECONDS);
            assertTrue(dline.getState() instanceof SidecarState.Ready);
            assertEquals(((SidecarState.Ready) dline.getState()).getConnection().getProcess().getPid(), dline.health().get(WAIT, TimeUnit.SECONDS).getPid());

            Profile profile = dline.upsertProfile(Profile.newBuilder().setName("Scripted").setProvider("anthropic")
                .setBaseUrl(model.getUrl()).setModel("claude-scripted").setContextWindow(200_000).build()).get(WAIT, TimeUnit.SECONDS);
            dline.setSecret(profile.getId(), "api_key", "test-key").get(WAIT, TimeUnit.SECONDS);
            String taskId = dline.newTask(workspace.toString(), "Write java.txt", profile.getId()).get(WAIT, TimeUnit.SECONDS);

            BlockingQueue<TaskEvent> events = new LinkedBlockingQueue<>();
            try (DlineFutures.Subscription subscription = dline.subscribe(taskId, 0, events::add)) {
                Ask ask = await(events, "approval", TaskEvent::hasAsk).getAsk();
                assertEquals("write_to_file", ask.getTool());
                dline.respond(taskId, ask.getAskId(), true, "").get(WAIT, TimeUnit.SECONDS);
                await(events, "completion", e -> e.hasStatusChanged() && e.getStatusChanged().getStatus() == TaskStatus.TASK_STATUS_COMPLETED);
            }
            assertEquals("from java\n", Files.readString(workspace.resolve("java.txt")));
            assertEquals(TaskStatus.TASK_STATUS_COMPLETED, dline.getTask(taskId).get(WAIT, TimeUnit.SECONDS).getTask().getStatus());
            assertTrue(dline.listTasks(workspace.toString()).get(WAIT, TimeUnit.SECONDS).getTasksList().stream().anyMatch(t -> t.getId().equals(taskId)));
            Checkpoint baseline = dline.listCheckpoints(taskId).get(WAIT, TimeUnit.SECONDS).stream()
                .filter(c -> c.getKind() == CheckpointKind.CHECKPOINT_KIND_BASELINE).findFirst().orElseThrow();
            assertEquals("java.txt", dline.compare(taskId, baseline.getId()).get(WAIT, TimeUnit.SECONDS).getFiles(0).getPath());

            // Restore All on the first message: asked as a dry run first (it names the checkpoint and
            // the files, and changes nothing), then done, with the same answer.
            UiMessage first = dline.getTask(taskId).get(WAIT, TimeUnit.SECONDS).getMessagesList().stream()
                .filter(m -> m.getRole() == MessageRole.MESSAGE_ROLE_USER).findFirst().orElseThrow();
            EditMessageResponse dry = dline.editMessage(taskId, first.getId(), "Write java.txt again",
                EditMessageMode.EDIT_MESSAGE_MODE_RESTORE_ALL, true).get(WAIT, TimeUnit.SECONDS);
            assertEquals(baseline.getId(), dry.getCheckpointId());
            assertEquals(List.of("java.txt"), dry.getDeletedPathsList());
            assertEquals("", dry.getUndoCheckpointId());
            assertTrue(Files.exists(workspace.resolve("java.txt")), "a dry run deletes nothing");
            assertEquals(first.getId(), dline.getTask(taskId).get(WAIT, TimeUnit.SECONDS).getMessages(0).getId());
            EditMessageResponse done = dline.editMessage(taskId, first.getId(), "Write java.txt again",
                EditMessageMode.EDIT_MESSAGE_MODE_RESTORE_ALL).get(WAIT, TimeUnit.SECONDS);
            assertEquals(dry.getCheckpointId(), done.getCheckpointId());
            assertEquals(dry.getDeletedPathsList(), done.getDeletedPathsList());
            assertFalse(Files.exists(workspace.resolve("java.txt")));

            // Failures arrive as a DlineException with the Connect code, for calls and for subscriptions.
            ExecutionException failed = assertThrows(ExecutionException.class, () -> dline.getTask("no-such-task").get(WAIT, TimeUnit.SECONDS));
            assertEquals(Code.NOT_FOUND, assertInstanceOf(DlineException.class, failed.getCause()).getCode());
            DlineFutures.Subscription unknown = dline.subscribe("no-such-task", 0, e -> { });
            ExecutionException ended = assertThrows(ExecutionException.class, () -> unknown.getDone().get(WAIT, TimeUnit.SECONDS));
            assertEquals(Code.NOT_FOUND, assertInstanceOf(DlineException.class, ended.getCause()).getCode());
        }
    }
}
