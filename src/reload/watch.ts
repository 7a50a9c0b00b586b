import { watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';

export interface ConfigWatcher {
  close(): void;
}

export interface WatchOptions {
  /** Quiet time after the last event before `onChange` runs: editors and ConfigMap swaps emit bursts. */
  readonly debounceMs?: number;
  readonly onError?: (error: Error) => void;
}

export const DEFAULT_DEBOUNCE_MS = 200;

/**
 * Calls `onChange` after changes in the directory holding `file`. The directory, not the file, is watched: a
 * Kubernetes ConfigMap volume replaces the `..data` symlink atomically (the file's inode never changes, a watch on
 * it sees nothing), and editors replace files by rename. Any event counts; the reloader compares content hashes,
 * so unrelated events cost a file read, nothing more.
 */
export function watchConfigFile(file: string, onChange: () => void, options: WatchOptions = {}): ConfigWatcher {
  const debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  let timer: NodeJS.Timeout | undefined;
  const watcher: FSWatcher = watch(dirname(resolve(file)), { persistent: false }, () => {
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  });
  watcher.on('error', (error) => options.onError?.(error));
  return {
    close: () => {
      clearTimeout(timer);
      watcher.close();
    },
  };
}
