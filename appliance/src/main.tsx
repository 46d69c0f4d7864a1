import { render } from 'preact';
import { App } from './App';
import { loadBranding } from './branding/branding';
import { resumeSession } from './session/session';
import './styles/base.css';

void loadBranding();
void resumeSession();
render(<App />, document.getElementById('app')!);
