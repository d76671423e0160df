/** The source directories the build id covers. */
export declare const SOURCE_DIRS: readonly string[];
/** A hash of every source file under `root` the bundles are made of. */
export declare function buildId(root: string): string;
