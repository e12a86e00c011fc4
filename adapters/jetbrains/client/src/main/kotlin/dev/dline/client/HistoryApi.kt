package dev.dline.client

import dline.v1.History.ListTasksRequest
import dline.v1.History.ListTasksResponse
import dline.v1.History.SetFavoriteRequest
import dline.v1.History.TaskSort
import dline.v1.History.WatchHistoryRequest
import dline.v1.History.WatchHistoryResponse
import kotlinx.coroutines.flow.Flow

/** HistoryService: the task list and its changes. */
class HistoryApi internal constructor(private val source: ConnectionSource) {
    suspend fun list(
        workspaceRoot: String = "",
        query: String = "",
        favoritesOnly: Boolean = false,
        pageSize: Int = 0,
        pageToken: String = "",
        sort: TaskSort = TaskSort.TASK_SORT_NEWEST,
    ): ListTasksResponse = source.unary {
        history.listTasks(
            ListTasksRequest.newBuilder()
                .setWorkspaceRoot(workspaceRoot).setQuery(query).setFavoritesOnly(favoritesOnly)
                .setPageSize(pageSize).setPageToken(pageToken).setSort(sort).build(),
            emptyMap(),
        )
    }

    suspend fun setFavorite(taskId: String, favorite: Boolean) {
        source.unary { history.setFavorite(SetFavoriteRequest.newBuilder().setTaskId(taskId).setFavorite(favorite).build(), emptyMap()) }
    }

    /** A notice whenever the index changes, in this or another window's sidecar; survives restarts. */
    fun watch(afterSeq: Long = 0): Flow<WatchHistoryResponse> = source.resumableStream(
        startAfter = afterSeq,
        open = { history.watchHistory(emptyMap()) },
        request = { after -> WatchHistoryRequest.newBuilder().setAfterSeq(after).build() },
        seqOf = { it.seq },
        dropSeen = false,
    )
}
