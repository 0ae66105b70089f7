/**
 * Generator of a tiny, valid BERT-type model folder that transformers.js
 * loads through its real `feature-extraction` pipeline: config.json
 * (model_type bert), a small WordPiece tokenizer.json, tokenizer_config.json
 * and onnx/model.onnx (IR 7, opset 13). The graph is
 *   last_hidden_state = (Gather(word_emb, input_ids) + Gather(type_emb, token_type_ids))
 *                       * Unsqueeze(Cast(attention_mask))
 * so mean pooling gives the average of the word vectors: texts that share
 * words are closer. Weights come from a seeded PRNG, so the output is
 * byte-for-byte deterministic. Used by tests and benchmarks (no embedding
 * model can be downloaded here) and by anyone who wants to try the local
 * provider offline. Never commit the generated files.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AttrType, DataType, encodeModel, floatTensor, int64Tensor } from './onnx-proto.js';

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');
const PUNCT = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'.split('');

/** A small developer vocabulary: whole words get their own vector, the rest splits into characters. */
export const DEFAULT_WORDS = (
  'the a an and or not no is are was be to of in on for with by at from as it this that these use used using ' +
  'we you they should must never always do does when why how what where which fail fails failed failure error ' +
  'errors fix fixed fixes bug bugs test tests testing suite ci build builds deploy deploys release pipeline ' +
  'database db postgres mysql sqlite redis cache caching connection connections pool pooling refused timeout ' +
  'timeouts query queries migration migrations schema index table tables transaction lock locks ' +
  'server client api http https request requests response responses endpoint route routes auth token tokens ' +
  'login session sessions user users password secret secrets key keys config configuration env environment ' +
  'file files path paths directory folder package packages module modules dependency dependencies version ' +
  'node npm pnpm yarn typescript javascript python rust go java css html react vue frontend backend ui ' +
  'style styles lint format formatting type types function functions class classes method interface ' +
  'memory memories agent agents git commit commits branch branches merge rebase push pull remote ref refs ' +
  'docker container containers image kubernetes cluster port ports host network dns proxy ' +
  'log logs logging debug trace metric metrics monitor alert performance slow fast latency speed ' +
  'decision convention constraint rule rules known failed attempt architecture security preference ' +
  'run runs running start stop restart retry retries crash crashes hang hangs flaky ' +
  'tab tabs space spaces indent indentation quote quotes semicolon semicolons naming ' +
  'upload download storage disk s3 bucket queue worker workers job jobs cron schedule ' +
  'payment payments invoice billing email emails notification notifications ' +
  'cat cats dog dogs pizza weather music garden'
).split(' ');

export interface TinyModelOptions {
  hidden?: number;
  seed?: number;
  words?: string[];
}

export interface TinyModel {
  dir: string;
  hidden: number;
  vocabSize: number;
  /** sha-256 of all generated files: changes whenever the model would. */
  fingerprint: string;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function tinyVocab(words: string[] = DEFAULT_WORDS): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of [...SPECIAL, ...CHARS, ...CHARS.map((c) => `##${c}`), ...PUNCT, ...words]) {
    if (!seen.has(t)) {
      seen.add(t);
      out.push(t);
    }
  }
  return out;
}

function tokenizerJson(vocab: string[]): object {
  const ids = Object.fromEntries(vocab.map((t, i) => [t, i]));
  const special = (t: string) => ({
    id: ids[t],
    content: t,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map(special),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: ids,
    },
  };
}

/** The ONNX bytes of the tiny model for a vocabulary size and hidden size. */
export function tinyOnnx(vocabSize: number, hidden: number, seed: number): Uint8Array {
  const rnd = mulberry32(seed);
  const gauss = () => {
    // Box-Muller; deterministic given the PRNG
    const u = Math.max(rnd(), 1e-12);
    const v = rnd();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const word = new Float32Array(vocabSize * hidden);
  for (let i = 0; i < word.length; i++) word[i] = gauss();
  // Special tokens ([CLS], [SEP], …) appear in every text: keep them small so
  // they do not dominate the mean of short texts.
  for (let t = 0; t < SPECIAL.length; t++) for (let j = 0; j < hidden; j++) word[t * hidden + j] *= 0.05;
  const types = new Float32Array(2 * hidden);
  for (let i = 0; i < types.length; i++) types[i] = 0.01 * gauss();
  const seq = ['batch_size', 'sequence_length'];
  return encodeModel({
    irVersion: 7,
    opset: 13,
    producer: 'git-mem tiny-model',
    graph: {
      name: 'tiny_bert',
      nodes: [
        {
          op: 'Gather',
          inputs: ['word_embeddings', 'input_ids'],
          outputs: ['we'],
          name: 'gather_word',
          attributes: [{ name: 'axis', type: AttrType.INT, i: 0 }],
        },
        {
          op: 'Gather',
          inputs: ['token_type_embeddings', 'token_type_ids'],
          outputs: ['te'],
          name: 'gather_type',
          attributes: [{ name: 'axis', type: AttrType.INT, i: 0 }],
        },
        { op: 'Add', inputs: ['we', 'te'], outputs: ['emb'], name: 'add' },
        {
          op: 'Cast',
          inputs: ['attention_mask'],
          outputs: ['mask_f'],
          name: 'cast',
          attributes: [{ name: 'to', type: AttrType.INT, i: DataType.FLOAT }],
        },
        { op: 'Unsqueeze', inputs: ['mask_f', 'unsqueeze_axes'], outputs: ['mask_3d'], name: 'unsqueeze' },
        { op: 'Mul', inputs: ['emb', 'mask_3d'], outputs: ['last_hidden_state'], name: 'mask' },
      ],
      initializers: [
        floatTensor('word_embeddings', [vocabSize, hidden], word),
        floatTensor('token_type_embeddings', [2, hidden], types),
        int64Tensor('unsqueeze_axes', [1], [2]),
      ],
      inputs: [
        { name: 'input_ids', elemType: DataType.INT64, shape: seq },
        { name: 'attention_mask', elemType: DataType.INT64, shape: seq },
        { name: 'token_type_ids', elemType: DataType.INT64, shape: seq },
      ],
      outputs: [{ name: 'last_hidden_state', elemType: DataType.FLOAT, shape: [...seq, hidden] }],
    },
  });
}

/** The files of the tiny model folder, relative path → content. */
export function tinyModelFiles(opts: TinyModelOptions = {}): Map<string, Uint8Array | string> {
  const hidden = opts.hidden ?? 384;
  const seed = opts.seed ?? 20240611;
  const vocab = tinyVocab(opts.words);
  const files = new Map<string, Uint8Array | string>();
  files.set(
    'config.json',
    JSON.stringify(
      {
        architectures: ['BertModel'],
        model_type: 'bert',
        hidden_size: hidden,
        vocab_size: vocab.length,
        type_vocab_size: 2,
        max_position_embeddings: 512,
        num_attention_heads: 1,
        num_hidden_layers: 0,
        intermediate_size: hidden,
        pad_token_id: 0,
        _name_or_path: 'git-mem/tiny-bert',
      },
      null,
      2,
    ),
  );
  files.set('tokenizer.json', JSON.stringify(tokenizerJson(vocab)));
  files.set(
    'tokenizer_config.json',
    JSON.stringify(
      {
        tokenizer_class: 'BertTokenizer',
        do_lower_case: true,
        model_max_length: 512,
        clean_up_tokenization_spaces: true,
        cls_token: '[CLS]',
        sep_token: '[SEP]',
        pad_token: '[PAD]',
        unk_token: '[UNK]',
        mask_token: '[MASK]',
      },
      null,
      2,
    ),
  );
  files.set('onnx/model.onnx', tinyOnnx(vocab.length, hidden, seed));
  return files;
}

/**
 * Writes the tiny model into `dir` (created if needed). Idempotent: when the
 * folder already holds the same model (same fingerprint) nothing is written,
 * so parallel test workers can share one folder.
 */
export function writeTinyModel(dir: string, opts: TinyModelOptions = {}): TinyModel {
  const files = tinyModelFiles(opts);
  const h = createHash('sha256');
  for (const [p, c] of files) h.update(p).update('\0').update(c).update('\0');
  const fingerprint = h.digest('hex');
  const stamp = join(dir, '.tiny-model');
  const hidden = opts.hidden ?? 384;
  const vocabSize = tinyVocab(opts.words).length;
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === fingerprint)
    return { dir, hidden, vocabSize, fingerprint };
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  for (const [p, c] of files) {
    const tmp = join(dir, `${p}.tmp-${process.pid}`);
    writeFileSync(tmp, c);
    renameSync(tmp, join(dir, p));
  }
  writeFileSync(stamp, fingerprint);
  return { dir, hidden, vocabSize, fingerprint };
}
