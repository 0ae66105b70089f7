// @huggingface/transformers is optional and not a dependency of the repository (npm install leaves
// its ~430 MB runtime out): local.ts imports it lazily and describes the part it uses (TfModule).
declare module '@huggingface/transformers';
