/** Why `login` stopped; `exitCode` 2 when the server could not be reached at all. */
export class LoginError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}
