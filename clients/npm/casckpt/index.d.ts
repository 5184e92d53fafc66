/** The absolute path of the casckpt binary for this platform; throws when its platform package is not installed. */
export declare function binaryPath(): string;
/** The platform package's name for this platform: `@casckpt/${process.platform}-${process.arch}`. */
export declare function platformPackage(): string;
