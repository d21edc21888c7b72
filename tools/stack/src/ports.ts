import net from "node:net";

/** A port the stack is about to listen on, and the variable that changes it. */
export interface WantedPort {
  port: number;
  variable: string;
  /** What listens there, for the message ("the base URL", "the web app", ...). */
  role: string;
}

/** A port another program holds: says which one and how to pick another. */
export class PortTakenError extends Error {
  readonly code = "port_taken";
  constructor(readonly wanted: WantedPort) {
    super(
      `port ${wanted.port} (${wanted.role}) is already in use by another program: stop it, or pick another port with ${wanted.variable}, e.g. ${wanted.variable}=${wanted.port + 1} pnpm start`,
    );
  }
}

function canListen(port: number, host: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code !== "EADDRINUSE" && error.code !== "EACCES"));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** True when nothing listens on `port`, on the loopback address or on every interface. */
export async function isPortFree(port: number): Promise<boolean> {
  return (await canListen(port, "127.0.0.1")) && (await canListen(port, undefined));
}

/** Throws a {@link PortTakenError} for the first wanted port that is not free. */
export async function checkPorts(wanted: WantedPort[]): Promise<void> {
  for (const w of wanted) if (!(await isPortFree(w.port))) throw new PortTakenError(w);
}
