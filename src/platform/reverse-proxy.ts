export interface ReverseProxyStatus {
  running: boolean;
  version: string;
}

/** The reverse-proxy daemon: its rendered configuration file, process control and log files. */
export interface ReverseProxyControl {
  status(): Promise<ReverseProxyStatus>;
  start(): Promise<string>;
  stop(): Promise<string>;
  restart(): Promise<string>;
  /** Checks a rendered configuration without applying it: null when valid, else the checker's message. */
  validate(configText: string): Promise<string | null>;
  /** Installs the configuration; restarts when enabled, stops when not. */
  apply(configText: string, enabled: boolean): Promise<string>;
  /** The last lines of a log, oldest first. */
  logs(kind: 'access' | 'server', lines: number): Promise<string[]>;
}
