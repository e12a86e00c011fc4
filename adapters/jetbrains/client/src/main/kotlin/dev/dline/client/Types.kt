package dev.dline.client

// Short names for the generated messages the facade's callers use most (protoc's outer classes
// are named after the .proto files: dline.v1.Task, dline.v1.Settings, ...).

typealias TaskEvent = dline.v1.Task.TaskEvent
typealias TaskStatus = dline.v1.Task.TaskStatus
typealias TaskSummary = dline.v1.Task.TaskSummary
typealias UiMessage = dline.v1.Task.UiMessage
typealias Ask = dline.v1.Task.Ask
typealias AskKind = dline.v1.Task.AskKind
typealias GetTaskResponse = dline.v1.Task.GetTaskResponse
typealias DeleteMode = dline.v1.Task.DeleteMode
typealias Profile = dline.v1.Settings.Profile
typealias SettingsScope = dline.v1.Settings.SettingsScope
typealias Checkpoint = dline.v1.CheckpointOuterClass.Checkpoint
typealias FileChange = dline.v1.CheckpointOuterClass.FileChange
typealias RestoreMode = dline.v1.CheckpointOuterClass.RestoreMode
typealias CheckpointKind = dline.v1.CheckpointOuterClass.CheckpointKind
typealias FileStatus = dline.v1.CheckpointOuterClass.FileStatus
typealias SkippedPath = dline.v1.CheckpointOuterClass.SkippedPath
typealias SkipReason = dline.v1.CheckpointOuterClass.SkipReason
typealias KeptPath = dline.v1.CheckpointOuterClass.KeptPath
typealias KeptReason = dline.v1.CheckpointOuterClass.KeptReason
typealias CheckpointState = dline.v1.CheckpointOuterClass.CheckpointState
typealias EditMessageMode = dline.v1.CheckpointOuterClass.EditMessageMode
typealias ImportItem = dline.v1.Import.ImportItem
typealias ImportItemKind = dline.v1.Import.ImportItemKind
typealias ImportResult = dline.v1.Import.ImportResult
typealias Capability = dline.v1.Settings.Capability
typealias CapabilityToggle = dline.v1.Settings.CapabilityToggle
typealias ToggleScope = dline.v1.Settings.ToggleScope
typealias ToggleState = dline.v1.Settings.ToggleState
typealias ErrorReason = dline.v1.Errors.ErrorReason
typealias ErrorDetail = dline.v1.Errors.ErrorDetail
typealias ToolCall = dline.v1.Task.ToolCall
typealias ToolCallStatus = dline.v1.Task.ToolCallStatus
typealias FileEdit = dline.v1.Task.FileEdit
typealias MessageRole = dline.v1.Task.MessageRole
