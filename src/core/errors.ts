/** Every error code of spec part 7 with its HTTP status. One table, one class. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_JSON: 400,
  INVALID_ID_FORMAT: 400,
  INVALID_PARAMETER: 400,
  INVALID_INPUT: 400,
  AUTH_REQUIRED: 401,
  AUTH_TOKEN_INVALID: 401,
  AUTH_TOKEN_EXPIRED: 401,
  AUTH_INVALID_CREDENTIALS: 401,
  INVALID_API_KEY: 401,
  UNAUTHORIZED: 401,
  BILLING_SUBSCRIPTION_REQUIRED: 402,
  BILLING_SUBSCRIPTION_PAST_DUE: 402,
  BILLING_SUBSCRIPTION_CANCELLED: 402,
  FORBIDDEN: 403,
  PERMISSION_DENIED: 403,
  FEATURE_DISABLED: 403,
  MFA_STEPUP_REQUIRED: 403,
  PROJECT_LIMIT_REACHED: 403,
  DOMAIN_ALREADY_CLAIMED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PROJECT_SLUG_EXISTS: 409,
  PUBKEY_MISMATCH: 409,
  OWNERSHIP_NOT_PROVEN: 409,
  NEEDS_PROVIDER_CONNECTION: 409,
  consent_already_decided: 409,
  session_ended: 410,
  PAYLOAD_TOO_LARGE: 413,
  FILE_SIZE_LIMIT_EXCEEDED: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RENAME_CORPUS_TOO_LARGE: 413,
  CONTENT_POLICY_VIOLATION: 422,
  DOMAIN_NOT_ON_CLOUDFLARE: 422,
  CRYPTO_FLOOR_VIOLATION: 426,
  UPGRADE_REQUIRED: 426,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  DATABASE_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  SERVICE_UNAVAILABLE: 503,
  PROCESSING_RESTRICTED: 403,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error type services throw; the core handler turns it into the envelope. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  /**
   * `cause`: why a dependency failed (a store's error code, a network error), for the operator's log line only: an
   * enumerable property, so the error handler's log line carries it; the client's answer never does.
   */
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, opts?: { status?: number; headers?: Record<string, string>; cause?: unknown }) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = opts?.status ?? ERROR_STATUS[code];
    this.details = details;
    this.headers = opts?.headers;
    if (opts?.cause !== undefined) this.cause = opts.cause;
  }
}

export const notFound = (what = 'Resource', details?: Record<string, unknown>) =>
  new AppError('NOT_FOUND', `${what} not found`, details);
export const validation = (message: string, details?: Record<string, unknown>) =>
  new AppError('VALIDATION_ERROR', message, details);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new AppError('CONFLICT', message, details);
export const forbidden = (message: string, details?: Record<string, unknown>) =>
  new AppError('FORBIDDEN', message, details);
export const permissionDenied = (permission: string) =>
  new AppError('PERMISSION_DENIED', `This action needs the "${permission}" permission`, { permission });
