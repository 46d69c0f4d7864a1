// Public surface of native/llm: the rest of Hearth imports from here, never node-llama-cpp.
// Where models live on disk (manifest, ACTIVE, checksums, presets) is native/model-files' business.
export { GenerationTimeoutError, GeneratorBusyError, UpstreamError, type BackendCheck, type ChatMessage, type Generator } from './generator.js';
export { loadGenerator, type LoadGeneratorOptions } from './load-generator.js';
export { LocalGenerator } from './local-generator.js';
export { importLlm, pullLlm } from './install.js';
export { selfTestGpu, type SelfTestResult } from './gpu-self-test.js';
