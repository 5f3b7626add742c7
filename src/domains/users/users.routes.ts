import { routes } from "../../rest/route.js";

export default routes("Users", [{ method: "GET", path: "/users/{userId}", field: "Query.user", summary: "Get a user by id" }]);
