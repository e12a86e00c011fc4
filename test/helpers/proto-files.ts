// The protocol's file descriptors, for tests that walk every service and method.
export { file_dline_v1_system } from "../../core/src/gen/dline/v1/system_pb.js";
export { file_dline_v1_settings } from "../../core/src/gen/dline/v1/settings_pb.js";
export { file_dline_v1_task } from "../../core/src/gen/dline/v1/task_pb.js";
export { file_dline_v1_history } from "../../core/src/gen/dline/v1/history_pb.js";
export { file_dline_v1_checkpoint } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
export { file_dline_v1_import } from "../../core/src/gen/dline/v1/import_pb.js";
