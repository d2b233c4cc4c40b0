export interface ReverseProxyStatus {
  running: boolean;
  version: string;
  /** The supervised process (a proxy Bulwark runs itself): its pid, automatic restarts after it died, why it last ended. */
  pid?: number | null;
  restarts?: number;
  last_error?: string | null;
}

/** What the area hands the proxy: its installed configuration file and where the access log goes. */
export interface ProxyInstall {
  /** The rendered configuration (in the format of `dialect`), already written. */
  configFile: string;
  /** The access log file Bulwark appends to (confined to the log directories), and its line format; null: none. */
  accessLog: { path: string; format: 'common' | 'clf' | 'combined' | 'json' } | null;
}

/** The reverse-proxy daemon: its configuration format, process control and log lines. */
export interface ReverseProxyControl {
  /**
   * The configuration the proxy reads: `model-yaml` is the model itself as one YAML document (the simulated
   * proxy), `caddy-json` Caddy's native JSON (src/render/caddy/caddy.ts).
   */
  readonly dialect: 'model-yaml' | 'caddy-json';
  status(): Promise<ReverseProxyStatus>;
  start(install: ProxyInstall): Promise<string>;
  stop(): Promise<string>;
  restart(install: ProxyInstall): Promise<string>;
  /** Checks a rendered configuration file without applying it: null when valid, else one line saying why. */
  validate(configFile: string): Promise<string | null>;
  /** Installs the configuration: a running proxy reloads it without dropping connections; stops when not enabled. */
  apply(install: ProxyInstall, enabled: boolean): Promise<string>;
  /** The last lines of a log, oldest first. */
  logs(kind: 'access' | 'server', lines: number): Promise<string[]>;
}
