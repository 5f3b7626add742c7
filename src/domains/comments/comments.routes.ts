import { routes } from "../../rest/route.js";

const CR = "/spaces/{spaceId}/change-requests/{changeRequestId}";

export default [
  ...routes("Change request comments", [
    { method: "GET", path: `${CR}/comments`, field: "Query.changeRequestComments", summary: "List the comments of a change request" },
    {
      method: "POST",
      path: `${CR}/comments`,
      field: "Mutation.changeRequestCommentCreate",
      status: 201,
      summary: "Comment on a change request",
    },
    {
      method: "GET",
      path: `${CR}/comments/{commentId}`,
      field: "Query.changeRequestComment",
      summary: "Get a comment of a change request",
    },
    {
      method: "PUT",
      path: `${CR}/comments/{commentId}`,
      field: "Mutation.changeRequestCommentUpdate",
      summary: "Resolve, reopen, edit or react to a comment",
    },
    {
      method: "DELETE",
      path: `${CR}/comments/{commentId}`,
      field: "Mutation.changeRequestCommentDelete",
      status: 204,
      summary: "Delete a comment and its replies",
    },
    {
      method: "GET",
      path: `${CR}/comments/{commentId}/replies`,
      field: "Query.changeRequestCommentReplies",
      summary: "List the replies to a comment",
    },
    {
      method: "POST",
      path: `${CR}/comments/{commentId}/replies`,
      field: "Mutation.changeRequestCommentReplyCreate",
      status: 201,
      summary: "Reply to a comment",
    },
    {
      method: "GET",
      path: `${CR}/comments/{commentId}/replies/{commentReplyId}`,
      field: "Query.changeRequestCommentReply",
      summary: "Get a reply",
    },
    {
      method: "PUT",
      path: `${CR}/comments/{commentId}/replies/{commentReplyId}`,
      field: "Mutation.changeRequestCommentReplyUpdate",
      summary: "Edit or react to a reply",
    },
    {
      method: "DELETE",
      path: `${CR}/comments/{commentId}/replies/{commentReplyId}`,
      field: "Mutation.changeRequestCommentReplyDelete",
      status: 204,
      summary: "Delete a reply",
    },
    {
      method: "GET",
      path: `${CR}/commenters`,
      field: "Query.changeRequestCommenters",
      summary: "List the members who commented on a change request",
    },
  ]),
  ...routes("Space comments", [
    { method: "GET", path: "/spaces/{spaceId}/comments", field: "Query.spaceComments", summary: "List the comments of a space" },
    {
      method: "POST",
      path: "/spaces/{spaceId}/comments",
      field: "Mutation.spaceCommentCreate",
      status: 201,
      summary: "Comment on a space",
    },
    { method: "GET", path: "/spaces/{spaceId}/comments/{commentId}", field: "Query.spaceComment", summary: "Get a comment" },
    {
      method: "PUT",
      path: "/spaces/{spaceId}/comments/{commentId}",
      field: "Mutation.spaceCommentUpdate",
      summary: "Resolve, reopen, edit or react to a comment",
    },
    {
      method: "DELETE",
      path: "/spaces/{spaceId}/comments/{commentId}",
      field: "Mutation.spaceCommentDelete",
      status: 204,
      summary: "Delete a comment and its replies",
    },
    {
      method: "POST",
      path: "/spaces/{spaceId}/comments/{commentId}/replies",
      field: "Mutation.spaceCommentReplyCreate",
      status: 201,
      summary: "Reply to a comment",
    },
    {
      method: "GET",
      path: "/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}",
      field: "Query.spaceCommentReply",
      summary: "Get a reply",
    },
    {
      method: "PUT",
      path: "/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}",
      field: "Mutation.spaceCommentReplyUpdate",
      summary: "Edit or react to a reply",
    },
    {
      method: "DELETE",
      path: "/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}",
      field: "Mutation.spaceCommentReplyDelete",
      status: 204,
      summary: "Delete a reply",
    },
    {
      method: "GET",
      path: "/spaces/{spaceId}/commenters",
      field: "Query.spaceCommenters",
      summary: "List the members who commented on a space",
    },
  ]),
];
