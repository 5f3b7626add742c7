import { routes } from "../../rest/route.js";

export default routes("Changerequests", []);
