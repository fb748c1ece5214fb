// A project extension: it loads only when the project is trusted.
import { appendFileSync } from "node:fs";

export default function () {
	appendFileSync(process.env.TRUST_LOG!, "factory local\n");
}
