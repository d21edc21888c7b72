/** Response header of get-session that carries the freshly issued JWT. */
export const SET_AUTH_JWT_HEADER = "set-auth-jwt";

/** Local-storage key under which the web client keeps the JWT. */
export const AUTH_TOKEN_STORAGE_KEY = "authToken";

/** Suffix of the session cookie's name: `<prefix>.session_token`. */
export const SESSION_COOKIE_SUFFIX = ".session_token";

/** Query parameter that carries the JWT on the WebSocket upgrade. */
export const WS_TOKEN_PARAM = "token";

/** JWT lifetime: 30 days, in seconds. */
export const JWT_LIFETIME_SECONDS = 30 * 24 * 60 * 60;

/** Path prefix of the identity area. */
export const AUTH_BASE_PATH = "/api/auth";
