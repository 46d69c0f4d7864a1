// Public surface of native/llm: the rest of Hearth imports from here, never node-llama-cpp.
// Where models live on disk (manifest, ACTIVE, checksums, presets) is native/model-files' business.
export * from './generator.js';
export type { LlmLog } from './llm-log.js';
export { loadGenerator, type LoadGeneratorOptions } from './load-generator.js';
export { LocalGenerator, type LocalGeneratorOptions } from './local-generator.js';
export { DEFAULT_HOSTED_BASE_URL, OpenAIGenerator, type OpenAIGeneratorOptions } from './openai-generator.js';
export { importLlm, installLlm, pullLlm, type InstallLlmOptions } from './install.js';
