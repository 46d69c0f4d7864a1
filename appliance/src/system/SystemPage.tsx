import { Alert } from '../components/Alert';
import { formatBytes, formatDuration } from '../components/format';
import { Meter } from '../components/Meter';
import { useLoad } from '../components/useLoad';
import { type ComponentStatus, type Hardware, hardware, health, type HealthReport, type ModelInfo, modelInfo } from './api';
import './system.css';

const COMPONENT_LABEL: Record<string, string> = { database: 'Database', vector_index: 'Vector index', embedder: 'Embedding model', chat_model: 'Chat model' };
const STATUS_LABEL: Record<ComponentStatus, string> = { ok: 'OK', not_installed: 'Not installed', unreachable: 'Unreachable', error: 'Error' };
const STATUS_BADGE: Record<ComponentStatus, string> = { ok: 'badge-ok', not_installed: 'badge-warning', unreachable: 'badge-error', error: 'badge-error' };
const ANSWERS: Record<HealthReport['capabilities']['answers'], string> = {
  generative: 'Written by the chat model',
  extractive: 'Extractive: quoted passages (no chat model)',
  unavailable: 'Failing: the configured chat model does not answer (see Chat model below)',
};
const OVERALL: Record<HealthReport['status'], [string, string]> = {
  ok: ['Everything works', 'badge-ok'],
  degraded: ['Degraded: some parts are missing or failing', 'badge-warning'],
  error: ['Failing: the database does not answer', 'badge-error'],
};

function HealthSection({ report }: { report: HealthReport }) {
  const [text, badge] = OVERALL[report.status];
  return (
    <>
      <p>
        <span class={`badge ${badge}`}>{report.status.toUpperCase()}</span> {text}. Version {report.version}, up {formatDuration(report.uptime_seconds)}.
      </p>
      <div class="table-wrap">
        <table class="components table-cards">
          <caption class="visually-hidden">Components</caption>
          <thead>
            <tr>
              <th scope="col">Component</th>
              <th scope="col">Status</th>
              <th scope="col">Check took</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(report.components).map(([name, component]) => (
              <tr key={name}>
                <th scope="row">{COMPONENT_LABEL[name] ?? name}</th>
                <td data-label="Status">
                  <span class={`badge ${STATUS_BADGE[component.status]}`}>{STATUS_LABEL[component.status]}</span>
                </td>
                <td data-label="Check took">{Math.round(component.latency_ms)} ms</td>
                <td data-label="Detail" class="untrusted">
                  {component.detail}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <dl class="facts">
        <dt>Search</dt>
        <dd>{report.capabilities.search === 'hybrid' ? 'Hybrid: meaning and keywords' : 'Keywords only (no embedding model)'}</dd>
        <dt>Answers</dt>
        <dd>{ANSWERS[report.capabilities.answers]}</dd>
      </dl>
    </>
  );
}

function ModelsSection({ info }: { info: ModelInfo }) {
  const chat = info.chat;
  const embedding = info.embedding;
  return (
    <div class="two-columns">
      <div class="panel">
        <h3>Chat model</h3>
        {chat ? (
          <dl class="facts">
            <dt>Model</dt>
            <dd>{chat.model}</dd>
            <dt>Runs</dt>
            <dd>{chat.backend === 'local' ? 'On this box' : chat.backend === 'hosted' ? 'Hosted API' : 'Inference server'} ({chat.device})</dd>
            {chat.parameters !== null && (
              <>
                <dt>Parameters</dt>
                <dd>{chat.parameters.toLocaleString()}</dd>
              </>
            )}
            {chat.quantisation && (
              <>
                <dt>Quantisation</dt>
                <dd>{chat.quantisation}</dd>
              </>
            )}
            <dt>Context</dt>
            <dd>
              {chat.context.effective.toLocaleString()} tokens in use ({chat.context.requested.toLocaleString()} asked{chat.context.trained ? `, ${chat.context.trained.toLocaleString()} trained` : ''})
            </dd>
            {chat.threads !== null && (
              <>
                <dt>Threads</dt>
                <dd>{chat.threads}</dd>
              </>
            )}
            {chat.gpu_layers !== null && (
              <>
                <dt>GPU layers</dt>
                <dd>{chat.gpu_layers}</dd>
              </>
            )}
          </dl>
        ) : (
          <p class="muted">None installed: answers quote the most relevant passages.</p>
        )}
      </div>
      <div class="panel">
        <h3>Embedding model</h3>
        {embedding ? (
          <dl class="facts">
            <dt>Model</dt>
            <dd>{embedding.model_id}</dd>
            <dt>Dimensions</dt>
            <dd>{embedding.dimension}</dd>
            <dt>Device</dt>
            <dd>{embedding.device}</dd>
            <dt>Longest input</dt>
            <dd>{embedding.max_tokens} tokens</dd>
          </dl>
        ) : (
          <p class="muted">None installed: search uses keywords only.</p>
        )}
        {info.default_embedder && info.default_embedder.state !== 'not_needed' && <p class="hint untrusted">Default embedder: {info.default_embedder.detail}</p>}
      </div>
    </div>
  );
}

function HardwareSection({ value }: { value: Hardware }) {
  const used = value.memory.total_bytes - value.memory.available_bytes;
  return (
    <dl class="facts">
      <dt>Processor</dt>
      <dd>
        {value.cpu.manufacturer} {value.cpu.brand}: {value.cpu.physical_cores} cores, {value.cpu.cores} threads{value.cpu.speed_ghz ? `, ${value.cpu.speed_ghz} GHz` : ''}
      </dd>
      <dt>Memory</dt>
      <dd>
        <Meter label="In use" value={used} max={value.memory.total_bytes} text={`${formatBytes(used)} of ${formatBytes(value.memory.total_bytes)} (${formatBytes(value.memory.available_bytes)} available)`} />
      </dd>
      <dt>Graphics</dt>
      <dd>
        {value.gpus.length
          ? value.gpus.map((gpu) => `${gpu.vendor} ${gpu.model}${gpu.vram_bytes ? ` (${formatBytes(gpu.vram_bytes)})` : ''}`).join('; ')
          : 'None found'}
      </dd>
      {value.jetson && (
        <>
          <dt>Jetson</dt>
          <dd>
            {value.jetson.model ?? 'Unknown model'}
            {value.jetson.l4t_release ? `, L4T ${value.jetson.l4t_release}` : ''}
          </dd>
        </>
      )}
      <dt>System</dt>
      <dd>
        {value.os.distro} {value.os.release} ({value.os.platform}, {value.os.arch})
      </dd>
      <dt>Node.js</dt>
      <dd>{value.node_version}</dd>
    </dl>
  );
}

export default function SystemPage() {
  // Each section loads on its own, so a slow hardware probe does not hold back the health report.
  const report = useLoad(health);
  const models = useLoad(modelInfo);
  const machine = useLoad(hardware);
  const checkAgain = () => [report, models, machine].forEach((section) => section.reload());
  return (
    <section class="page stack">
      <div class="page-head">
        <h1 tabIndex={-1}>Health, hardware and models</h1>
        <button type="button" class="button-secondary" onClick={checkAgain}>
          Check again
        </button>
      </div>
      <section class="stack" aria-labelledby="health-title">
        <h2 id="health-title">Health</h2>
        {report.error && <Alert kind="error">{report.error}</Alert>}
        {report.value ? <HealthSection report={report.value} /> : !report.error && <p class="loading">Loading…</p>}
      </section>
      <section class="stack" aria-labelledby="models-title">
        <h2 id="models-title">Models</h2>
        {models.error && <Alert kind="error">{models.error}</Alert>}
        {models.value ? <ModelsSection info={models.value} /> : !models.error && <p class="loading">Loading…</p>}
      </section>
      <section class="stack" aria-labelledby="hardware-title">
        <h2 id="hardware-title">Hardware</h2>
        {machine.error && <Alert kind="error">{machine.error}</Alert>}
        {machine.value ? <HardwareSection value={machine.value} /> : !machine.error && <p class="loading">Loading…</p>}
      </section>
    </section>
  );
}
