export { SecretBox } from "./secret-box.js";
