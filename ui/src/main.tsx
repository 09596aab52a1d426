import { render } from 'preact';
import { App } from './views/App';
import './styles.css';

render(<App />, document.getElementById('app') as HTMLElement);
